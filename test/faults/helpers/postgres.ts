import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../../src/db/embedded.js';

/**
 * PostgreSQL servers a fault test may kill: a spare one of its own, or the
 * embedded one a spawned service started under its DATA_DIR. Found through
 * DATA_DIR/pg/postmaster.pid (line 1 the pid, line 4 the port), as
 * src/db/embedded.ts lays the cluster out.
 */

export async function tempDataDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  // As root the embedded server runs as the postgres user, which must enter it.
  await chmod(dir, 0o711);
  return dir;
}

export async function postmaster(dataDir: string): Promise<{ pid: number; port: number } | undefined> {
  const file = join(dataDir, 'pg', 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const lines = (await readFile(file, 'utf8')).split('\n');
  return { pid: Number(lines[0]), port: Number(lines[3]) };
}

export const alive = (pid: number) => existsSync(`/proc/${pid}`);

export async function waitGone(pid: number, timeoutMs = 30_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; alive(pid); ) {
    if (Date.now() > deadline) throw new Error(`process ${pid} still alive after ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** The superuser URL of an embedded cluster under dataDir, on the port its postmaster.pid names. */
export async function embeddedUrl(dataDir: string): Promise<string> {
  const password = (await readFile(join(dataDir, 'postgres-password'), 'utf8')).trim();
  const running = await postmaster(dataDir);
  if (!running) throw new Error(`no postmaster.pid under ${dataDir}`);
  return `postgres://postgres:${password}@127.0.0.1:${running.port}/postgres`;
}

export interface SparePostgres {
  url: string;
  dataDir: string;
  /** pg_ctl -m immediate's signal (SIGQUIT) or SIGKILL to the postmaster; resolves when it is gone. */
  crash(signal?: 'SIGQUIT' | 'SIGKILL'): Promise<void>;
  /** Starts it again on the same port (clients reconnect to the URL they had). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const logger = pino({ level: 'warn' });

/** FAULT_PG_BIN=/usr/lib/postgresql/15/bin: the spare server is that installation's, not the embedded 18. */
const installed = process.env.FAULT_PG_BIN
  ? { postgres: join(process.env.FAULT_PG_BIN, 'postgres'), initdb: join(process.env.FAULT_PG_BIN, 'initdb') }
  : undefined;

/** A second PostgreSQL for one test, in a temporary directory: the embedded 18, or FAULT_PG_BIN's. */
export async function startSparePostgres(): Promise<SparePostgres> {
  const dataDir = await tempDataDir('deal-fault-pg-');
  let server: EmbeddedPostgres = await startEmbeddedPostgres({ dataDir, logger, binaries: installed, settings: { fsync: 'off' } });
  const port = Number(new URL(server.url).port);
  return {
    url: server.url,
    dataDir,
    async crash(signal = 'SIGQUIT') {
      const running = await postmaster(dataDir);
      if (!running) throw new Error('spare PostgreSQL is not running');
      process.kill(running.pid, signal);
      await waitGone(running.pid);
    },
    async restart() {
      // Backends of a SIGKILLed postmaster leave on their own; until then the shared memory is busy and a start fails.
      for (let attempt = 1; ; attempt++) {
        try {
          server = await startEmbeddedPostgres({ dataDir, logger, port, binaries: installed, settings: { fsync: 'off' } });
          return;
        } catch (error) {
          if (attempt >= 30) throw error;
          await new Promise((done) => setTimeout(done, 1000));
        }
      }
    },
    async stop() {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
