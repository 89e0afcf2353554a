import { loadConfig } from '../../config/config.js';
import { startServer } from '../../server.js';
import { parseCommandArgs, UsageError } from '../args.js';
import { printFirstOperator } from '../first-operator.js';

/** Runs the server until SIGINT/SIGTERM. */
export async function serveCommand(args: string[]): Promise<void> {
  const { settings, positionals } = parseCommandArgs(args);
  if (positionals.length > 0) throw new UsageError(`serve takes no arguments, got "${positionals[0]}"`);
  const config = loadConfig(settings, process.env);
  const server = await startServer(config);
  if (server.bootstrap) printFirstOperator(server.bootstrap);
  console.log(`filehaven listening on ${server.baseUrl} (web ${server.webUrl}, data ${config.dataDir})`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      // A second signal: the operator wants it gone now (acknowledged uploads are already durable).
      console.log(`${signal} again: stopping now`);
      process.exit(1);
    }
    stopping = true;
    console.log(`${signal}: finishing requests and stopping`);
    server.close().then(
      () => process.exit(0),
      (error) => {
        console.error('error while stopping:', (error as Error).message);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
