/**
 * The demo's alerting rules (apps/demo/deploy/monitoring/prometheusrule.yaml) under Prometheus'
 * own rule engine: `promtool check rules`, then each group of leader-election.rules-test.yaml as
 * its own `promtool test rules --run` (one node test per group, so the summary counts them; the
 * JUnit report proves the group ran), and a mutated rule that the tests must catch.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEMO_DEPLOY_DIR } from '@nest-leader/demo/launcher/demo-manifests';
import { load } from 'js-yaml';
import { buildPromtool, runPromtool } from '../support/promtool.js';

interface AlertTest {
  alertname: string;
  exp_alerts: unknown[];
}
interface RulesTestFile {
  rule_files: string[];
  tests: { name?: string; alert_rule_test?: AlertTest[] }[];
}
interface Rule {
  alert?: string;
  record?: string;
  expr?: string;
  for?: string;
}
interface PrometheusRule {
  apiVersion: string;
  kind: string;
  spec: { groups: { name: string; rules: Rule[] }[] };
}

const RULE_FILE = join(DEMO_DEPLOY_DIR, 'monitoring/prometheusrule.yaml');
// This file runs from test/dist/alerts; the YAML stays in test/alerts.
const TESTS_FILE = fileURLToPath(
  new URL('../../alerts/leader-election.rules-test.yaml', import.meta.url),
);
const TESTS_NAME = 'leader-election.rules-test.yaml';

// Read here only for names and shapes; promtool reads the original files (a YAML-to-JSON round
// trip would turn series values such as `0x80` into the number 128).
const rule = load(readFileSync(RULE_FILE, 'utf8')) as PrometheusRule;
const tests = load(readFileSync(TESTS_FILE, 'utf8')) as RulesTestFile;
const alertNames = rule.spec.groups.flatMap((g) => g.rules.map((r) => r.alert ?? r.record!));

/** A directory holding `groups` as rules.json (what the tests' rule_files name) and the tests. */
function ruleDir(parent: string, name: string, groups: PrometheusRule['spec']['groups']): string {
  const dir = join(parent, name);
  mkdirSync(dir);
  // spec.groups is a Prometheus rule file; JSON is YAML, so promtool reads it as it is.
  writeFileSync(join(dir, 'rules.json'), JSON.stringify({ groups }));
  copyFileSync(TESTS_FILE, join(dir, TESTS_NAME));
  return dir;
}

/** Runs the one test group called `name`; returns the run and the names JUnit reports. */
function testGroup(dir: string, name: string) {
  const junit = join(dir, 'junit.xml');
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const run = runPromtool(
    ['test', 'rules', `--junit=${junit}`, '--run', `^${escaped}$`, TESTS_NAME],
    dir,
  );
  const report = readFileSync(junit, 'utf8');
  const ran = [...report.matchAll(/<testcase name="([^"]*)"/g)].map((m) => unescapeXml(m[1]!));
  return { ...run, ran, failures: /<failure/.test(report) };
}

function unescapeXml(text: string): string {
  return text
    .replace(/&#34;|&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

describe('alerting rules (promtool)', () => {
  let parent: string;
  let dir: string;

  before(() => {
    buildPromtool();
    parent = mkdtempSync(join(tmpdir(), 'nest-leader-promtool-'));
    dir = ruleDir(parent, 'rules', rule.spec.groups);
  });
  after(() => rmSync(parent, { recursive: true, force: true }));

  it('is a monitoring.coreos.com/v1 PrometheusRule that promtool check rules accepts', () => {
    assert.equal(rule.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(rule.kind, 'PrometheusRule');
    const check = runPromtool(['check', 'rules', 'rules.json'], dir);
    assert.equal(check.status, 0, check.output);
    assert.match(check.output, new RegExp(`SUCCESS: ${alertNames.length} rules found`));
  });

  it('has the four alerts, each tested firing and silent, in uniquely named groups', () => {
    assert.deepEqual(alertNames.sort(), [
      'LeaderElectionFrequentTransitions',
      'LeaderElectionMultipleLeaders',
      'LeaderElectionNoLeader',
      'LeaderElectionRenewalsFailing',
    ]);
    const cases = tests.tests.flatMap((g) => g.alert_rule_test ?? []);
    for (const alert of alertNames) {
      const ofAlert = cases.filter((c) => c.alertname === alert);
      assert.ok(
        ofAlert.some((c) => c.exp_alerts.length > 0),
        `${alert}: a case where it fires`,
      );
      assert.ok(
        ofAlert.some((c) => c.exp_alerts.length === 0),
        `${alert}: a case where it is silent`,
      );
    }
    const names = tests.tests.map((g) => g.name);
    assert.ok(
      names.every((n) => typeof n === 'string' && n !== ''),
      'every group has a name',
    );
    assert.equal(new Set(names).size, names.length, 'group names are unique');
  });

  for (const group of tests.tests) {
    it(group.name!, () => {
      const run = testGroup(dir, group.name!);
      assert.deepEqual(run.ran, [group.name], 'promtool ran exactly this group');
      assert.equal(run.status, 0, run.output);
      assert.equal(run.failures, false, run.output);
    });
  }

  // Each rule weakened in one way; the named group must catch it.
  const mutations: { change: string; alert: string; mutate: (r: Rule) => Rule; group: string }[] = [
    {
      change: 'NoLeader waits 10 minutes',
      alert: 'LeaderElectionNoLeader',
      mutate: (r) => ({ ...r, for: '10m' }),
      group: 'no replica leads for 2 minutes - NoLeader fires',
    },
    {
      change: 'NoLeader waits 1 minute',
      alert: 'LeaderElectionNoLeader',
      mutate: (r) => ({ ...r, for: '1m' }),
      group: 'a failover with 90 s without a leader - no alert',
    },
    {
      change: 'MultipleLeaders fires at once',
      alert: 'LeaderElectionMultipleLeaders',
      mutate: (r) => ({ ...r, for: '0s' }),
      group: 'a handover seen as two leaders in one scrape - no alert',
    },
    {
      change: 'MultipleLeaders sums over namespaces',
      alert: 'LeaderElectionMultipleLeaders',
      mutate: (r) => ({ ...r, expr: 'sum by (name) (leader_election_master_status) > 1' }),
      group: 'one leader in each of two namespaces with the same election name - no alert',
    },
    {
      change: 'FrequentTransitions uses > 5 on the extrapolated increase',
      alert: 'LeaderElectionFrequentTransitions',
      mutate: (r) => ({ ...r, expr: r.expr!.replace('>= 6', '> 5') }),
      group: '5 changes of leader in 10 minutes - no alert',
    },
    {
      change: 'RenewalsFailing counts conflicts',
      alert: 'LeaderElectionRenewalsFailing',
      mutate: (r) => ({ ...r, expr: r.expr!.replace('{kind!="conflict"}', '') }),
      group: 'conflicts on the leader (normal races) - no alert',
    },
    {
      change: 'RenewalsFailing ignores who leads',
      alert: 'LeaderElectionRenewalsFailing',
      mutate: (r) => ({
        ...r,
        expr: r.expr!.replace('and (leader_election_master_status == 1)', ''),
      }),
      group: "the leader's renewals keep failing - RenewalsFailing fires for the leader only",
    },
  ];
  for (const [index, { change, alert, mutate, group }] of mutations.entries()) {
    it(`catches a broken rule: ${change}`, () => {
      const mutated = rule.spec.groups.map((g) => ({
        ...g,
        rules: g.rules.map((r) => (r.alert === alert ? mutate(r) : r)),
      }));
      assert.notDeepEqual(mutated, rule.spec.groups, 'the mutation changed the rule');
      const run = testGroup(ruleDir(parent, `mutated-${index}`, mutated), group);
      assert.deepEqual(run.ran, [group]);
      assert.notEqual(run.status, 0, run.output);
      assert.equal(run.failures, true);
      assert.match(run.output, /FAILED/);
    });
  }
});
