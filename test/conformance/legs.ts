/**
 * The legs of the conformance run (see run.ts) and the suite runs each is made of. The 0.2.0-alpha.12 suite
 * lists its scenarios with `conformance list`; which belong to which revision is its own tag (`--spec-version`
 * picks them), except the tasks extension's, which carry no revision and are run by name with `--force`.
 */
export const LEGS = ['0.1.16', '2025-11-25', '2026-07-28', 'tasks'] as const;
export type Leg = (typeof LEGS)[number];

/** The ten scenarios of the tasks extension (io.modelcontextprotocol/tasks, SEP-2663) in 0.2.0-alpha.12. */
export const TASKS_SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-status-notifications',
  'tasks-required-task-error',
  'tasks-mrtr-composition',
] as const;

export interface SuiteRun {
  readonly leg: Leg;
  readonly label: string;
  readonly suite: '0.1.16' | '0.2.0-alpha.12';
  /** Arguments after `server --url <url>`. */
  readonly args: readonly string[];
}

/** The suite runs of `legs`; `scenario` narrows every leg to that one scenario. */
export function legRuns(legs: readonly Leg[], dir: string, scenario?: string): SuiteRun[] {
  const select = (suiteArgs: readonly string[]): string[] =>
    scenario === undefined ? [...suiteArgs] : ['--scenario', scenario];
  const runs: SuiteRun[] = [];
  for (const leg of legs) {
    if (leg === '0.1.16') {
      runs.push({
        leg,
        label: 'all',
        suite: '0.1.16',
        args: ['--expected-failures', `${dir}expected-failures.yml`, ...select(['--suite', 'all'])],
      });
    } else if (leg === 'tasks') {
      const names = scenario === undefined ? TASKS_SCENARIOS : TASKS_SCENARIOS.filter((name) => name === scenario);
      for (const name of names) {
        runs.push({
          leg,
          label: name,
          suite: '0.2.0-alpha.12',
          args: [
            '--expected-failures',
            `${dir}expected-failures-tasks.yml`,
            '--spec-version',
            '2026-07-28',
            '--force',
            '--scenario',
            name,
          ],
        });
      }
    } else {
      runs.push({
        leg,
        label: 'all',
        suite: '0.2.0-alpha.12',
        args: [
          '--expected-failures',
          `${dir}expected-failures-${leg}.yml`,
          '--spec-version',
          leg,
          ...select(['--suite', 'all']),
        ],
      });
    }
  }
  return runs;
}
