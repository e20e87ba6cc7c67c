import { describe, expect, it } from 'vitest';
import { ORACLE_CORPUS } from './fixtures/oracle-corpus.js';
import seed from './fixtures/seed-tasks-examples.json' with { type: 'json' };
import { type Frame, SCHEMA_PAIRS, type SchemaName, verdict } from './oracle/schema-pairs.js';

// The official SDK is the oracle for strictness: for every value both sides must reach the same verdict,
// and that verdict must be the one the corpus records.

interface SeedExample {
  title: string;
  schemas: SchemaName[];
  frame: Frame;
  at?: string;
  json: Record<string, unknown>;
}

const examples = seed.examples as SeedExample[];

function isSchemaName(name: string): name is SchemaName {
  return Object.hasOwn(SCHEMA_PAIRS, name);
}

describe('oracle corpus: our schemas reach the same verdicts as the MCP SDK', () => {
  it('is large and covers both verdicts', () => {
    expect(ORACLE_CORPUS.length).toBeGreaterThanOrEqual(80);
    expect(ORACLE_CORPUS.filter((entry) => entry.accept).length).toBeGreaterThan(40);
    expect(ORACLE_CORPUS.filter((entry) => !entry.accept).length).toBeGreaterThan(40);
    expect(new Set(ORACLE_CORPUS.map((entry) => entry.name)).size).toBe(ORACLE_CORPUS.length);
  });

  it('judges every schema pair at least once', () => {
    const judged = new Set(ORACLE_CORPUS.map((entry) => entry.schema));
    const missing = Object.keys(SCHEMA_PAIRS).filter((name) => isSchemaName(name) && !judged.has(name));
    expect(missing).toEqual([]);
  });

  it.each(ORACLE_CORPUS.map((entry) => [entry.name, entry] as const))('%s', (_name, entry) => {
    const ours = verdict('ours', entry.schema, entry.frame, entry.value);
    const sdk = verdict('sdk', entry.schema, entry.frame, entry.value);
    expect({ ours, sdk }).toEqual({ ours: entry.accept, sdk: entry.accept });
  });
});

describe('seed examples (MCP 2025-11-25 Tasks page)', () => {
  it('holds the 20 JSON examples of the page, each classified against known schemas', () => {
    expect(examples).toHaveLength(20);
    for (const example of examples) {
      expect(example.schemas.length).toBeGreaterThan(0);
      expect(example.schemas.every(isSchemaName)).toBe(true);
    }
  });

  it('holds 20 distinct examples with distinct titles', () => {
    expect(new Set(examples.map((example) => example.title)).size).toBe(examples.length);
    expect(new Set(examples.map((example) => JSON.stringify(example.json))).size).toBe(examples.length);
  });

  it.each(examples.map((example) => [example.title, example] as const))(
    '%s is accepted by ours and by the SDK',
    (_title, example) => {
      const value = example.at === undefined ? example.json : example.json[example.at];
      expect(value).toBeDefined();
      for (const schema of example.schemas) {
        const ours = verdict('ours', schema, example.frame, value);
        const sdk = verdict('sdk', schema, example.frame, value);
        expect({ schema, ours, sdk }).toEqual({ schema, ours: true, sdk: true });
      }
    },
  );
});
