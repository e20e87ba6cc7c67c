import { z } from 'zod';
import { int, type Setting } from './setting-schemas.js';

/** Settings of the gateway's admin listener: the operator console, the admin API and BullMQ's raw queues. */
export const ADMIN_SETTINGS = [
  {
    env: 'TASKGATE_ADMIN_PORT',
    flag: '--admin-port',
    scope: 'gateway',
    schema: int(1, 65535),
    description:
      'Port of the admin listener (operator console `/admin/`, admin API `/admin/api`, raw queues `/admin/queues`), never the MCP port. Unset: off.',
  },
  {
    env: 'TASKGATE_ADMIN_HOST',
    flag: '--admin-host',
    scope: 'gateway',
    schema: z.string().min(1),
    default: '127.0.0.1',
    description: 'Address the admin listener binds to.',
  },
  {
    env: 'TASKGATE_ADMIN_TOKEN',
    flag: '--admin-token',
    scope: 'gateway',
    schema: z.string().min(16, 'must be at least 16 characters'),
    description:
      'Bearer token of the admin listener (`Authorization: Bearer …`), at least 16 characters; required with `TASKGATE_ADMIN_PORT`. Keep it in a Secret.',
  },
] as const satisfies readonly Setting[];
