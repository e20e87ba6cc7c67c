/**
 * Runs one gateway process configured by the environment (see `gatewayOptionsFromEnv`, plus HOST and PORT)
 * and prints `taskgate gateway listening on <url>` once it serves. SIGTERM/SIGINT close it gracefully.
 */

import { gatewayOptionsFromEnv } from './env.js';
import { createGateway } from './gateway.js';

const gateway = createGateway(gatewayOptionsFromEnv());
const address = await gateway.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1');
process.stdout.write(`taskgate gateway listening on ${address.url}\n`);

const stop = (): void => {
  gateway.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
