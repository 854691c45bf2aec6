import { can, type Actor, type Permission } from '../host/permissions.js';

/**
 * The settings sections, in the order the index and the side menu show them.
 * A section appears to users holding its permission (the same one its routes
 * declare in `config.permission`, which the server enforces); `builtinHostOnly`
 * sections exist only where users are managed here (`host.managesUsers`).
 * Adding a section is one line here plus its routes.
 */

export interface SettingsSection {
  label: string;
  /** Without the mount prefix. */
  path: string;
  permission: Permission;
  /** One sentence for the index: what an administrator does there. */
  description: string;
  builtinHostOnly?: boolean;
}

export const SETTINGS_SECTIONS: SettingsSection[] = [
  {
    label: 'Pipelines and stages',
    path: '/service/settings/pipelines',
    permission: 'service:pipelines:manage',
    description: 'Create, rename and delete pipelines; add, edit, reorder and delete their stages.',
  },
  {
    label: 'Inbound webhook sources',
    path: '/service/settings/inbound',
    permission: 'service:webhooks:manage',
    description: 'Let lead forms and other systems create deals: a signed endpoint per source, its defaults and field mapping, and the log of what it received.',
  },
  {
    label: 'Outbound webhooks',
    path: '/service/settings/webhooks',
    permission: 'host:admin',
    description: 'Send every deal change to your receivers: subscriptions, test events, the delivery log and sending again.',
    builtinHostOnly: true,
  },
  {
    label: 'Users',
    path: '/service/settings/users',
    permission: 'host:admin',
    description: 'Create users, give them a role, reset a password, deactivate someone who left.',
    builtinHostOnly: true,
  },
  {
    label: 'Roles',
    path: '/service/settings/roles',
    permission: 'host:admin',
    description: 'What each role may do: the permissions it holds, or everything for administrators.',
    builtinHostOnly: true,
  },
  {
    label: 'API credentials',
    path: '/service/settings/api-credentials',
    permission: 'host:admin',
    description: 'OAuth clients for other programs; each acts as a user you choose.',
    builtinHostOnly: true,
  },
];

/** The sections this user sees (and may open). */
export function settingsSectionsFor(view: { actor: Actor; managesUsers: boolean }, sections = SETTINGS_SECTIONS): SettingsSection[] {
  return sections.filter((section) => can(view.actor, section.permission) && (!section.builtinHostOnly || view.managesUsers));
}

/** Who may open the settings index: anyone holding one section's permission. */
export const settingsPermissions = (sections = SETTINGS_SECTIONS): Permission[] => [...new Set(sections.map((s) => s.permission))];

/** The permission names in words, for role forms. */
export const PERMISSION_LABELS: Record<Permission, string> = {
  'service:deals:viewown': 'See their own deals',
  'service:deals:viewother': 'See everyone’s deals',
  'service:deals:create': 'Create deals',
  'service:deals:editown': 'Edit their own deals',
  'service:deals:editother': 'Edit everyone’s deals',
  'service:deals:deleteown': 'Delete their own deals',
  'service:deals:deleteother': 'Delete everyone’s deals',
  'service:pipelines:view': 'See pipelines and stages',
  'service:pipelines:manage': 'Manage pipelines and stages',
  'service:webhooks:manage': 'Manage inbound sources and outbound webhooks',
  'host:admin': 'Manage users, roles and API credentials',
};
