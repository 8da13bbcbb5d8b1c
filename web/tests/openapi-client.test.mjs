// A client generated from the server's OpenAPI document works: the document
// a running server serves is turned into TypeScript types with
// openapi-typescript, a small program written against those types must
// type-check (strict) — so a route or field missing from the document fails
// here — and the same program, run with openapi-fetch, logs in, submits a
// task, reads it back and lists nodes, bootstrap tokens and quotas.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';

import { ADMIN_PASSWORD, startServer } from './harness.mjs';

const WEB = resolve(import.meta.dirname, '..');

// The calls, written only against the generated `paths` type.
const program = `
import createClient from 'openapi-fetch';
import type { paths } from './schema';

export async function run(baseUrl: string, password: string): Promise<string[]> {
  const seen: string[] = [];
  const client = createClient<paths>({ baseUrl });
  const login = await client.POST('/api/v1/auth/login', { body: { username: 'admin', password } });
  if (!login.data) throw new Error('login failed: ' + JSON.stringify(login.error));
  const headers = { Authorization: 'Bearer ' + login.data.access_token };
  seen.push('login');

  const created = await client.POST('/api/v1/tasks', {
    headers, body: { name: 'generated-client', command: ['sleep', '1'] },
  });
  if (!created.data) throw new Error('create task failed: ' + JSON.stringify(created.error));
  const id: number = created.data.id;
  const got = await client.GET('/api/v1/tasks/{id}', { headers, params: { path: { id } } });
  if (got.data?.name !== 'generated-client') throw new Error('task read back: ' + JSON.stringify(got));
  seen.push('task ' + got.data.state);

  const nodes = await client.GET('/api/v1/nodes', { headers, params: { query: { limit: '10' } } });
  if (!nodes.data) throw new Error('nodes: ' + JSON.stringify(nodes.error));
  seen.push('nodes ' + nodes.data.total);

  const token = await client.POST('/api/v1/bootstrap-tokens', { headers, body: { description: 'generated client', ttl_seconds: 600 } });
  if (!token.data?.token) throw new Error('bootstrap token: ' + JSON.stringify(token.error));
  seen.push('token');

  const quotas = await client.GET('/api/v1/quotas', { headers });
  if (!quotas.data) throw new Error('quotas: ' + JSON.stringify(quotas.error));
  seen.push('quotas ' + quotas.data.total);

  const missing = await client.GET('/api/v1/tasks/{id}', { headers, params: { path: { id: 987654321 } } });
  if (!missing.error || missing.response.status !== 404) throw new Error('want 404, got ' + missing.response.status);
  seen.push('404 ' + missing.error.error.code);
  return seen;
}
`;

let server;
let dir;
before(async () => {
  server = await startServer();
  // Inside web/ so that the program resolves openapi-fetch from node_modules.
  dir = await mkdtemp(join(WEB, '.openapi-client-'));
});
after(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('a TypeScript client generated from /api/v1/openapi.json type-checks and calls the API', async () => {
  const doc = await (await fetch(`${server.apiURL}/api/v1/openapi.json`)).json();
  const types = astToString(await openapiTS(doc));
  await writeFile(join(dir, 'schema.d.ts'), types);
  await writeFile(join(dir, 'client.ts'), program);

  const opts = {
    strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler, skipLibCheck: true, types: [],
  };
  const tsProgram = ts.createProgram([join(dir, 'client.ts')], opts);
  const diags = ts.getPreEmitDiagnostics(tsProgram).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  assert.deepEqual(diags, [], 'the calls must type-check against the generated types');

  const js = ts.transpileModule(program, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
  await writeFile(join(dir, 'client.mjs'), js);
  const { run } = await import(pathToFileURL(join(dir, 'client.mjs')).href);
  const seen = await run(server.apiURL, ADMIN_PASSWORD);
  assert.deepEqual(seen.map((s) => s.split(' ')[0]), ['login', 'task', 'nodes', 'token', 'quotas', '404']);
  assert.equal(seen.at(-1), '404 not_found');
});
