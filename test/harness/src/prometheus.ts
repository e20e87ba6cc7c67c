/** One sample of a Prometheus text exposition: metric name, labels and value. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** What a scrape returned: every sample, and the metric families declared by `# TYPE` lines. */
export interface Scrape {
  readonly samples: readonly Sample[];
  /** Family name → type (`counter`, `gauge`, `histogram`, `summary`, `untyped`). */
  readonly types: ReadonlyMap<string, string>;
  /** The value of the sample `name` whose labels include `labels`; summed over all matches, 0 when none. */
  value(name: string, labels?: Readonly<Record<string, string>>): number;
  /** Every name a PromQL query could select: families plus `_bucket`/`_sum`/`_count` of histograms and summaries. */
  names(): Set<string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the Prometheus text format (version 0.0.4), as prom-client writes it. */
export function parsePrometheus(text: string): Scrape {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      if (name !== undefined && type !== undefined) types.set(name, type);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (match === null) throw new Error(`not a Prometheus sample: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL)) labels[key as string] = value as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return {
    samples,
    types,
    value(name, labels = {}) {
      return samples
        .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        .reduce((sum, s) => sum + s.value, 0);
    },
    names() {
      const names = new Set<string>();
      for (const [name, type] of types) {
        names.add(name);
        if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
        if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(`${name}${suffix}`);
      }
      for (const sample of samples) names.add(sample.name);
      return names;
    },
  };
}

/** GETs a `/metrics` URL and parses it. */
export async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`scrape of ${url} answered ${response.status}`);
  return parsePrometheus(await response.text());
}
