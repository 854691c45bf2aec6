import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstSteps } from '../clients/typescript/examples/first-steps.js';
import { generateTypes } from '../clients/typescript/src/generate.js';
import { ADMIN, basic, setupApp, type TestContext } from './helpers/app.js';
import { defaultPipeline } from './helpers/factories.js';

/**
 * The document is the contract a generated client trusts: types generated from
 * the live /service/openapi.json with openapi-typescript type-check an
 * integrator program (plain openapi-fetch, no hand edits), the program runs
 * against the live service, and the kit's checked-in types are exactly what
 * generation gives today.
 */

const root = resolve(import.meta.dirname, '..');
const kit = join(root, 'clients/typescript');
let t: TestContext;
let baseUrl: string;
let fresh: string;

beforeAll(async () => {
  t = await setupApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const document = await (await fetch(`${baseUrl}/service/openapi.json`)).json();
  fresh = await generateTypes(document);
});

function tsc(project: string): Promise<{ code: number; output: string }> {
  const bin = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  return new Promise((done) => {
    execFile(process.execPath, [bin, '-p', project, '--pretty', 'false'], { cwd: project }, (error, stdout, stderr) =>
      done({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

describe('a client generated from the live document', () => {
  const dir = mkdtempSync(join(tmpdir(), 'generated-client-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('type-checks the integrator program, and refuses a body the document does not allow', async () => {
    mkdirSync(join(dir, 'src'));
    mkdirSync(join(dir, 'examples'));
    // As a .ts source file, so the generated code itself is type-checked while the libraries' .d.ts are skipped.
    writeFileSync(join(dir, 'src/schema.ts'), fresh);
    writeFileSync(join(dir, 'examples/first-steps.ts'), readFileSync(join(kit, 'examples/first-steps.ts')));
    // The same client, a deal without its required title and a stage move without stage_id: the types must say no.
    writeFileSync(
      join(dir, 'examples/wrong.ts'),
      [
        "import createClient from 'openapi-fetch';",
        "import type { paths } from '../src/schema.js';",
        "const client = createClient<paths>({ baseUrl: 'http://127.0.0.1' });",
        "export const noTitle = client.POST('/service/deals/new', { body: { deal: { amount: 5 } } });",
        "export const noStage = client.POST('/service/{id}/stage', { params: { path: { id: 1 } }, body: { lost_reason: 'x' } });",
        '',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2023', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: [], lib: ['ES2023', 'DOM'] },
        include: ['src', 'examples'],
      }),
    );
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');

    const { code, output } = await tsc(dir);
    const errors = output.split('\n').filter((line) => /error TS\d+/.test(line));
    // The integrator program and the generated file compile as they are; only the two wrong calls fail.
    expect(errors.filter((line) => !line.startsWith('examples/wrong.ts'))).toEqual([]);
    expect(errors.map((line) => line.match(/^examples\/wrong\.ts\((\d+),/)?.[1])).toEqual(['4', '5']);
    expect(code).not.toBe(0);
  }, 120_000);

  it('runs the program against the live service: create, a typed 422 and 404, the cursor list, a stage move', async () => {
    const titles = ['Integrator one', 'Integrator two', 'Integrator three'];
    const result = await firstSteps(baseUrl, basic(ADMIN), titles);
    const pipeline = await defaultPipeline(t.db);

    expect(result.created.title).toBe('Integrator one');
    expect(result.created.stage).toBe(pipeline.stages[0]!.name);
    expect(result.invalid).toEqual({ status: 422, fields: ['deal[title]'], type: 'validation_failed' });
    expect(result.missing).toEqual({ status: 404, type: 'not_found' });

    const all = await t.db.selectFrom('deals').select('id').orderBy('id').execute();
    expect(all).toHaveLength(3);
    expect(result.listed.ids).toEqual(all.map((row) => row.id));
    expect(result.listed.pages).toBe(2);

    const won = pipeline.stages.find((stage) => stage.type === 'won')!;
    expect(result.moved).toEqual({ stage: won.name, status: 'won' });
    const stored = await t.db.selectFrom('deals').select(['stage_id', 'status']).where('id', '=', result.created.id).executeTakeFirstOrThrow();
    expect(stored).toEqual({ stage_id: won.id, status: 'won' });
  });
});

describe('the kit\'s checked-in types', () => {
  it('equal the types generated from the live document now (run `npm run generate` in clients/typescript when this fails)', () => {
    const checkedIn = readFileSync(join(kit, 'src/schema.d.ts'), 'utf8');
    expect(checkedIn === fresh, 'clients/typescript/src/schema.d.ts is out of date: regenerate it').toBe(true);
    expect(fresh).toContain('"/service/deals/new"');
  });
});
