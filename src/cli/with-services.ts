import { openServices, type Services } from '../composition.js';
import { loadConfig } from '../config/config.js';
import { checkSiteFolder } from '../config/site-folder.js';

/**
 * Opens the services of an existing site for one CLI command, and closes them after; a
 * data folder that is not a site's is refused, never created (only `serve` and `init` create one).
 */
export async function withServices<T>(settings: Record<string, string | undefined>, work: (services: Services) => Promise<T>): Promise<T> {
  const config = loadConfig(settings, process.env);
  await checkSiteFolder(config);
  const services = await openServices(config, {
    log: (error, message) => console.error(message, (error as Error).message),
    createDataFolder: false,
  });
  try {
    return await work(services);
  } finally {
    await services.close();
  }
}
