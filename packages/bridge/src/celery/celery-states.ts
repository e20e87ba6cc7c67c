import { createHash } from 'node:crypto';
import type { CeleryMeta } from '@taskgate/core';
import type { CallToolResult } from '@taskgate/protocol';
import { completedResult, failedResult, isRecord, progressOf, type ResultConfig } from '../mapping.js';

/** What one Celery state does to its task. */
export type CeleryStep =
  | { readonly kind: 'status'; readonly text: string }
  | { readonly kind: 'progress'; readonly progress: number; readonly total?: number; readonly message?: string }
  | { readonly kind: 'completed'; readonly result: CallToolResult }
  | { readonly kind: 'failed'; readonly result: CallToolResult; readonly traceback?: string }
  | { readonly kind: 'cancelled'; readonly text: string }
  | { readonly kind: 'none' };

/** `exc_type: message` of an exception as Celery's JSON serializer stores it (`exc_type`, `exc_message` args). */
function exceptionText(result: unknown, fallback: string): string {
  if (!isRecord(result) || typeof result.exc_type !== 'string') return fallback;
  const args = Array.isArray(result.exc_message) ? result.exc_message : [result.exc_message];
  const message = args
    .filter((arg) => arg !== undefined && arg !== null)
    .map((arg) => (typeof arg === 'string' ? arg : JSON.stringify(arg)))
    .join(', ');
  return message === '' ? result.exc_type : `${result.exc_type}: ${message}`;
}

/**
 * The step a Celery state means: STARTED → running; a custom state whose meta has `current` → progress (and
 * statusMessage); another custom state → its name as statusMessage; RETRY → statusMessage with the reason;
 * SUCCESS → the result mapped per `result`; FAILURE (or REJECTED) → a tool error `Type: message` (the
 * traceback only for the bridge's log); REVOKED → cancelled. PENDING is no state (Celery never stores it).
 */
export function celeryStep(tool: ResultConfig, meta: CeleryMeta): CeleryStep {
  switch (meta.status) {
    case 'PENDING':
    case 'RECEIVED':
      return { kind: 'none' };
    case 'STARTED': {
      const host = isRecord(meta.result) && typeof meta.result.hostname === 'string' ? meta.result.hostname : '';
      return { kind: 'status', text: host === '' ? 'Running on a Celery worker' : `Running on Celery worker ${host}` };
    }
    case 'RETRY':
      return { kind: 'status', text: `Retrying after ${exceptionText(meta.result, 'an error')}` };
    case 'SUCCESS':
      return { kind: 'completed', result: completedResult(tool, meta.result) };
    case 'FAILURE':
    case 'REJECTED':
      return {
        kind: 'failed',
        result: failedResult(exceptionText(meta.result, `The Celery task ended ${meta.status}`)),
        ...(typeof meta.traceback === 'string' && { traceback: meta.traceback }),
      };
    case 'REVOKED':
      return { kind: 'cancelled', text: `Revoked in Celery (${exceptionText(meta.result, 'revoked')})` };
    default: {
      const reported = progressOf(meta.result);
      if (reported !== undefined) return { kind: 'progress', ...reported };
      return { kind: 'status', text: `Celery state ${meta.status}` };
    }
  }
}

/** Identifies a state: the same status with the same meta is the same state, applied once. */
export function stateDigest(meta: CeleryMeta): string {
  return createHash('sha256')
    .update(`${meta.status}\n${JSON.stringify(meta.result ?? null)}`)
    .digest('base64url')
    .slice(0, 22);
}
