// Simulated nodes for the console's browser tests: a real `heteroflow agent`
// process whose vendor CLIs (nvidia-smi, npu-smi, …) are fakesmi wrapper
// scripts first on its PATH, enrolled with a bootstrap token created through
// the API — the same recipe as deploy/dev-run.sh (`make run`).
import { spawn, execFile } from 'node:child_process';
import { chmod, mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { ADMIN_PASSWORD, RESULTS, api } from './harness.mjs';

const run = promisify(execFile);
const adminTokens = new WeakMap();

/** adminToken logs in as admin once per server (access tokens outlive a test file). */
async function adminToken(server) {
  if (adminTokens.has(server)) return adminTokens.get(server);
  const res = await api(server, 'POST', '/api/v1/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
  if (res.status !== 200) throw new Error(`nodes.mjs: admin login failed (${res.status}): ${res.text}`);
  adminTokens.set(server, res.body.access_token);
  return res.body.access_token;
}

/**
 * startSimulatedNode enrolls and runs one simulated node against `server`
 * (from harness.startServer) and resolves once GET /api/v1/nodes/{id} reports
 * it online with all `count` devices in its inventory.
 *
 * opts: vendor ("nvidia", "ascend", "amd", "cambricon", …, as fakesmi knows
 * them), model, count, memoryMiB (default 65536), partitions (fakesmi
 * PartitionSpec list, e.g. [{device:0, profile:"3g.40gb", id:1}]), name (a
 * label sim=<name>; default vendor), labels ({k: v}), heartbeat (agent
 * --heartbeat, default "2s" so state changes show quickly), collector
 * (default true: the agent's embedded collector pushes metrics),
 * timeoutMs (default 60 s), token (a bootstrap token to enrol with instead
 * of a new one), serverURL (the --server the agent is given; default
 * server.apiURL), agentArgs (extra agent flags, e.g. --server-fingerprint).
 *
 * Returns {nodeId, name, dir, statePath, log(), stop()}. stop() ends the
 * agent (SIGTERM, then SIGKILL), keeps its log in web/test-results and
 * removes the temp dir.
 */
export async function startSimulatedNode(server, opts) {
  const bin = process.env.HETEROFLOW_BIN;
  if (!bin) throw new Error('nodes.mjs: HETEROFLOW_BIN is not set');
  const { vendor, model, count } = opts;
  if (!vendor || !model || !(count > 0)) throw new Error('nodes.mjs: vendor, model and count > 0 are required');
  const name = opts.name ?? vendor;
  const dir = await mkdtemp(join(tmpdir(), `hf-web-node-${name.replace(/[^a-z0-9-]/gi, '_')}-`));
  // Tasks run under an unprivileged account, which must reach the agent's data folder.
  await chmod(dir, 0o755);
  const profile = { vendor, model, count, memory_mib: opts.memoryMiB ?? 65536 };
  if (opts.partitions?.length) profile.partitions = opts.partitions;
  const profilePath = join(dir, 'profile.json');
  const statePath = join(dir, 'state.json');
  await writeFile(profilePath, JSON.stringify(profile));
  await run(bin, ['fakesmi', 'install', '--dir', join(dir, 'bin'), '--profile', profilePath, '--state', statePath, '--log', join(dir, 'cli.log')]);

  const token = await adminToken(server);
  let bootstrap = opts.token;
  if (!bootstrap) {
    const tok = await api(server, 'POST', '/api/v1/bootstrap-tokens', { token, body: { description: `web test node ${name}` } });
    if (tok.status !== 201) throw new Error(`nodes.mjs: create bootstrap token failed (${tok.status}): ${tok.text}`);
    bootstrap = tok.body.token;
  }

  const agentDir = join(dir, 'agent');
  const args = ['agent', '--server', opts.serverURL ?? server.apiURL, '--token', bootstrap, '--data-dir', agentDir,
    '--heartbeat', opts.heartbeat ?? '2s', '--name', name.replace(/[^A-Za-z0-9._-]/g, '-'), '--label', `sim=${name}`];
  for (const [k, v] of Object.entries(opts.labels ?? {})) args.push('--label', `${k}=${v}`);
  if (opts.collector === false) args.push('--no-collector');
  args.push(...(opts.agentArgs ?? []));
  const log = [];
  const proc = spawn(bin, args, {
    cwd: dir,
    env: { ...process.env, PATH: `${join(dir, 'bin')}:${process.env.PATH}`, HETEROFLOW_FAKESMI_STATE: statePath },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout.on('data', (b) => log.push(b.toString()));
  proc.stderr.on('data', (b) => log.push(b.toString()));
  let exited = null;
  proc.on('exit', (code, signal) => {
    exited = { code, signal };
  });

  const node = {
    nodeId: '',
    name,
    dir,
    statePath,
    log: () => log.join(''),
    async stop() {
      if (exited === null) {
        proc.kill('SIGTERM');
        for (let i = 0; i < 100 && exited === null; i++) await sleep(100);
        if (exited === null) proc.kill('SIGKILL');
        for (let i = 0; i < 20 && exited === null; i++) await sleep(100);
      }
      await mkdir(RESULTS, { recursive: true });
      await writeFile(join(RESULTS, `agent-${name.replace(/[^a-z0-9-]/gi, '_')}.log`), log.join(''));
      await rm(dir, { recursive: true, force: true });
    },
  };

  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let last = 'no credentials yet';
  for (;;) {
    if (exited !== null) {
      await node.stop();
      throw new Error(`nodes.mjs: agent ${name} exited early (${JSON.stringify(exited)}):\n${node.log()}`);
    }
    try {
      if (!node.nodeId) {
        // The agent writes its node id with its credential after enrolling.
        node.nodeId = JSON.parse(await readFile(join(agentDir, 'credentials.json'), 'utf8')).node_id ?? '';
      }
      if (node.nodeId) {
        const res = await api(server, 'GET', `/api/v1/nodes/${encodeURIComponent(node.nodeId)}`, { token });
        last = `${res.status} ${res.text.slice(0, 300)}`;
        if (res.status === 200 && res.body.state === 'online' && res.body.device_count === count) return node;
      }
    } catch (err) {
      last = String(err);
    }
    if (Date.now() > deadline) {
      await node.stop();
      throw new Error(`nodes.mjs: node ${name} not online with ${count} devices in time; last: ${last}\n${node.log()}`);
    }
    await sleep(250);
  }
}
