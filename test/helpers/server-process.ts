import { spawn, type ChildProcess } from 'node:child_process';

/**
 * The real entry points (`src/server.ts`, `src/worker.ts`) as child processes,
 * the way `npm start` and `npm run worker` run them, so a test can SIGKILL them.
 * Every child is remembered; `stopAll()` in afterAll ends whatever a failed test left.
 */

export interface ChildService {
  child: ChildProcess;
  /** The listening URL the server printed (empty for a worker). */
  url: string;
  /** stdout and stderr so far (the tail), to explain a failure. */
  output(): string;
  exited: Promise<void>;
}

const running = new Set<ChildProcess>();
const OUTPUT_LIMIT = 8 * 1024 * 1024;

function track(child: ChildProcess): Pick<ChildService, 'output' | 'exited'> {
  running.add(child);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_LIMIT);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    child.once('exit', () => done());
  }).finally(() => running.delete(child));
  return { output: () => output, exited };
}

function spawnEntry(entry: string, env: Record<string, string | undefined>): ChildProcess {
  // The parent's DATABASE_URL (a test run against PostgreSQL 15) must not leak into a child meant for embedded mode.
  const base = { ...process.env, DATABASE_URL: undefined, LOG_LEVEL: 'warn' };
  return spawn(process.execPath, ['--import', 'tsx', entry], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Starts the service and resolves once it prints its URL (bounded: embedded initdb can take a while on a busy machine). */
export async function spawnServer(env: Record<string, string | undefined>, timeoutMs = 120_000): Promise<ChildService> {
  const child = spawnEntry('src/server.ts', { PORT: '0', ...env });
  const tracked = track(child);
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`server did not start in ${timeoutMs} ms: ${tracked.output()}`)), timeoutMs);
    child.stdout!.on('data', () => {
      const match = /listening on (http:\/\/\S+)/.exec(tracked.output());
      if (match) {
        clearTimeout(timer);
        done(match[1]!);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      fail(new Error(`server exited (${code ?? signal}) before listening: ${tracked.output()}`));
    });
  });
  return { child, url, ...tracked };
}

export function spawnWorker(env: Record<string, string | undefined>): ChildService {
  const child = spawnEntry('src/worker.ts', env);
  return { child, url: '', ...track(child) };
}

/** SIGTERM (graceful), then SIGKILL if it has not gone within `graceMs`. */
export async function stopChild(service: Pick<ChildService, 'child' | 'exited'>, graceMs = 20_000): Promise<void> {
  const { child } = service;
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await service.exited;
  clearTimeout(timer);
}

export async function killChild(service: Pick<ChildService, 'child' | 'exited'>): Promise<void> {
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
  await service.exited;
}

/** For afterAll: every child this file started and did not see exit. */
export async function stopAll(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once('exit', () => done());
          child.kill('SIGKILL');
        }),
    ),
  );
}
