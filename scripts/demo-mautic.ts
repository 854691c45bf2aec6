import { spawn } from 'node:child_process';
import { ADMIN_ROLE, doubleUser, startMauticDouble } from '../test/mautic-double/index.js';

/**
 * `npm run demo:mautic`: the service with HOST_PLATFORM=mautic against the
 * Mautic contract double (not a real Mautic: see docs/host-mautic.md for that),
 * with a few Mautic contacts and deals that name them.
 */
const USER = { username: 'demo', password: 'demo-password-123' };
const PORT = process.env.PORT ?? '3010';

const mautic = await startMauticDouble({
  users: [doubleUser(1, USER.username, USER.password, ADMIN_ROLE, 'Demo Admin')],
  contacts: [
    { id: 101, email: 'ann@acme.example', firstname: 'Ann', lastname: 'Lee', company: 'Acme' },
    { id: 102, email: 'bob@globex.example', firstname: 'Bob', lastname: 'Stone', company: 'Globex' },
    { id: 103, email: 'cy@initech.example', firstname: 'Cy', lastname: 'Park', company: 'Initech' },
  ],
});

const server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
  env: {
    ...process.env,
    PORT,
    DATA_DIR: process.env.DATA_DIR ?? './data-demo-mautic',
    HOST_PLATFORM: 'mautic',
    MAUTIC_URL: mautic.url,
    MAUTIC_USERNAME: USER.username,
    MAUTIC_PASSWORD: USER.password,
    MAUTIC_WEBHOOK_SECRET: 'demo-webhook-secret',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});

const base = `http://127.0.0.1:${PORT}`;
const auth = `Basic ${Buffer.from(`${USER.username}:${USER.password}`).toString('base64')}`;
const api = async (path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method: body ? 'POST' : 'GET',
    headers: { authorization: auth, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return (await res.json()) as any;
};

let seeded = false;
server.stdout.on('data', async (chunk: Buffer) => {
  process.stdout.write(chunk);
  if (seeded || !chunk.toString().includes('listening on')) return;
  seeded = true;
  const existing = await api('/service/deals?limit=1');
  if (!existing.deals?.length) {
    for (const [title, contactId] of [['Acme renewal', 101], ['Globex expansion', 102], ['Initech pilot', 103]] as const) {
      const { deal } = await api('/service/deals/new', { deal: { title, amount: 1000 * contactId } });
      await api(`/service/${deal.id}/contacts`, { contact_id: contactId, role: 'Champion', is_primary: true });
    }
  }
  process.stdout.write(
    [
      '',
      `Mautic double (stand-in for Mautic) at ${mautic.url} with contacts 101-103`,
      `Log in with the Mautic user ${USER.username} / ${USER.password}:`,
      `  curl -u ${USER.username}:${USER.password} ${base}/service/deals`,
      `  curl -u ${USER.username}:${USER.password} ${base}/service/1/view     # committee contacts come from Mautic`,
      'Ctrl-C stops both.',
      '',
    ].join('\n'),
  );
});

const stop = () => server.kill('SIGTERM');
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
server.on('exit', async (code) => {
  await mautic.close();
  process.exit(code ?? 0);
});
