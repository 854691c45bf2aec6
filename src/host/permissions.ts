/** Permission names (Mautic-style bundle:level:permission), contract section 3. */
export const PERMISSIONS = [
  'service:deals:viewown',
  'service:deals:viewother',
  'service:deals:create',
  'service:deals:editown',
  'service:deals:editother',
  'service:deals:deleteown',
  'service:deals:deleteother',
  'service:pipelines:view',
  'service:pipelines:manage',
  'service:webhooks:manage',
  'host:admin',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

/** What a route asks for: one permission, or any one of several (`viewown` or `viewother`). */
export type PermissionRequirement = Permission | readonly Permission[];

export interface Actor {
  id: number;
  name: string;
  username: string;
  roleId: number;
  isAdmin: boolean;
  permissions: ReadonlySet<string>;
}

export function can(actor: Actor, permission: Permission): boolean {
  return actor.isAdmin || actor.permissions.has(permission);
}

export function canAny(actor: Actor, requirement: PermissionRequirement): boolean {
  return typeof requirement === 'string' ? can(actor, requirement) : requirement.some((p) => can(actor, p));
}

/** "own" means the caller owns or created the record. */
export function canOnRecord(
  actor: Actor,
  record: { ownerId: number | null; createdById: number | null },
  own: Permission,
  other: Permission,
): boolean {
  const mine = record.ownerId === actor.id || record.createdById === actor.id;
  return can(actor, other) || (mine && can(actor, own));
}
