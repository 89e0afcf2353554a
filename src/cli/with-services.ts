import { loadConfig } from '../config/config.js';
import { openServices, type Services } from '../services/services.js';

/** Opens the services of the data folder for one CLI command, and closes them after. */
export async function withServices<T>(settings: Record<string, string | undefined>, work: (services: Services) => Promise<T>): Promise<T> {
  const services = await openServices(loadConfig(settings, process.env), {
    log: (error, message) => console.error(message, (error as Error).message),
  });
  try {
    return await work(services);
  } finally {
    await services.close();
  }
}
