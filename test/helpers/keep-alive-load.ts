import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** What a keep-alive load runs: `clients` node:http clients from one address, each with its own pooled socket. */
export interface KeepAliveLoad {
  /** {base_url} of the server. */
  baseUrl: string;
  /** API key the uploads are sent with. */
  key: string;
  /** A page to GET (a file's download page). */
  page: string;
  /** Small bytes to GET and HEAD (the file's `?download=1`). */
  download: string;
  /** How many clients, each an http.Agent with keepAlive and one socket, like a pool of workers. */
  clients: number;
  /** Requests each client sends, one after another on its socket. */
  requestsPerClient: number;
}

/** What came back: statuses, transport failures, and the uploads acknowledged. */
export interface KeepAliveOutcome {
  /** Count per "METHOD status" of every answered request. */
  statuses: Record<string, number>;
  /** Count per "METHOD code" of every request that got no answer (ECONNRESET, EPIPE, socket hang up). */
  failures: Record<string, number>;
  /** 429 answers without Retry-After. */
  bareRefusals: number;
  /** Ids of the uploads answered 201. */
  acknowledged: string[];
  /** GET /healthz on a connection of its own every 50 ms through the run, as an orchestrator probes: statuses and failures. */
  probes: Record<string, number>;
}

/**
 * Runs the load in a process of its own, as clients behind one NAT would be: in the
 * server's own process the client and the server take turns on one event loop, and the
 * moment a server closes a socket the client is about to reuse hardly ever comes.
 */
export function runKeepAliveLoad(load: KeepAliveLoad): Promise<KeepAliveOutcome> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), JSON.stringify(load)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => (out += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`the load process exited with ${code}: ${out}`));
      resolve(JSON.parse(out) as KeepAliveOutcome);
    });
  });
}

async function run(load: KeepAliveLoad): Promise<KeepAliveOutcome> {
  const outcome: KeepAliveOutcome = { statuses: {}, failures: {}, bareRefusals: 0, acknowledged: [], probes: {} };
  const url = new URL(load.baseUrl);
  const bump = (counts: Record<string, number>, label: string) => (counts[label] = (counts[label] ?? 0) + 1);

  /** One request; resolves once it is answered (counted in `statuses`) or failed (counted in `failures`). */
  const request = (agent: http.Agent, method: string, path: string, body?: Buffer, probe = false) =>
    new Promise<void>((resolve) => {
      const headers: http.OutgoingHttpHeaders = body
        ? { 'Content-Type': 'multipart/form-data; boundary=XB', 'Content-Length': body.length, Authorization: load.key }
        : {};
      let settled = false;
      const failed = (error: NodeJS.ErrnoException) => {
        if (settled) return;
        settled = true;
        bump(probe ? outcome.probes : outcome.failures, `${method} ${error.code ?? error.message}`);
        resolve();
      };
      const req = http.request({ host: url.hostname, port: url.port, method, path, agent, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', failed);
        response.on('end', () => {
          if (settled) return;
          settled = true;
          const status = response.statusCode ?? 0;
          bump(probe ? outcome.probes : outcome.statuses, `${method} ${status}`);
          if (status === 429 && !response.headers['retry-after']) outcome.bareRefusals++;
          if (method === 'POST' && status === 201) {
            const id = /<entry>\s*<id>([^<]+)<\/id>/.exec(Buffer.concat(chunks).toString('utf8'))?.[1];
            outcome.acknowledged.push(id ?? '(201 without an id)');
          }
          resolve();
        });
      });
      req.on('error', failed);
      req.end(body);
    });

  const upload = (name: string) =>
    Buffer.from(`--XB\r\nContent-Disposition: form-data; name="upload"; filename="${name}"\r\n\r\n${'u'.repeat(4096)}\r\n--XB--\r\n`);
  // Each client starts at a different place in the mix, so the mix is the same at every moment.
  const mix = [
    (agent: http.Agent) => request(agent, 'GET', load.page),
    (agent: http.Agent) => request(agent, 'GET', load.download),
    (agent: http.Agent, n: string) => request(agent, 'POST', '/files', upload(`load-${n}.txt`)),
    (agent: http.Agent) => request(agent, 'HEAD', load.download),
    (agent: http.Agent) => request(agent, 'GET', '/healthz'),
  ];

  let running = true;
  const probing = (async () => {
    while (running) {
      await request(new http.Agent({ keepAlive: false }), 'GET', '/healthz', undefined, true);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const agents = Array.from({ length: load.clients }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  await Promise.all(
    agents.map(async (agent, client) => {
      for (let i = 0; i < load.requestsPerClient; i++) await mix[(client + i) % mix.length]!(agent, `${load.clients}-${client}-${i}`);
    }),
  );
  running = false;
  await probing;
  for (const agent of agents) agent.destroy();
  return outcome;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const outcome = await run(JSON.parse(process.argv[2]!) as KeepAliveLoad);
  process.stdout.write(JSON.stringify(outcome));
}
