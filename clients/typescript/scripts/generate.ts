/**
 * `npm run generate`: regenerates src/schema.d.ts from a running service's
 * document. DEAL_PIPELINE_URL is its base URL (default http://127.0.0.1:3000).
 */
import { writeFileSync } from 'node:fs';
import { fetchDocument, generateTypes } from '../src/generate.js';

const baseUrl = process.env.DEAL_PIPELINE_URL ?? 'http://127.0.0.1:3000';
const target = new URL('../src/schema.d.ts', import.meta.url);
writeFileSync(target, await generateTypes(await fetchDocument(baseUrl)));
console.log(`wrote ${target.pathname} from ${baseUrl}/service/openapi.json`);
