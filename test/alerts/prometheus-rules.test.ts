/**
 * The demo's alerting rules (apps/demo/deploy/monitoring/prometheusrule.yaml) under Prometheus'
 * own rule engine: `promtool check rules`, then each group of leader-election.rules-test.yaml as
 * its own `promtool test rules` run, one node test per group, so the summary counts them.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEMO_DEPLOY_DIR } from '@nest-leader/demo/launcher/demo-manifests';
import { parseYaml } from '@nest-leader/demo/launcher/raw-yaml';
import { buildPromtool, runPromtool } from '../support/promtool.js';

interface AlertTest {
  alertname: string;
  exp_alerts: unknown[];
}
interface TestGroup {
  name?: string;
  alert_rule_test?: AlertTest[];
  [field: string]: unknown;
}
interface RulesTestFile {
  rule_files: string[];
  evaluation_interval?: string;
  tests: TestGroup[];
}
interface PrometheusRule {
  apiVersion: string;
  kind: string;
  spec: { groups: { name: string; rules: { alert?: string; record?: string }[] }[] };
}

const RULE_FILE = join(DEMO_DEPLOY_DIR, 'monitoring/prometheusrule.yaml');
// This file runs from test/dist/alerts; the YAML stays in test/alerts.
const TESTS_FILE = fileURLToPath(
  new URL('../../alerts/leader-election.rules-test.yaml', import.meta.url),
);

const rule = parseYaml<PrometheusRule>(readFileSync(RULE_FILE, 'utf8'));
const tests = parseYaml<RulesTestFile>(readFileSync(TESTS_FILE, 'utf8'));
const alertNames = rule.spec.groups.flatMap((g) => g.rules.map((r) => r.alert ?? r.record!));

describe('alerting rules (promtool)', () => {
  let dir: string;

  before(() => {
    buildPromtool();
    dir = mkdtempSync(join(tmpdir(), 'nest-leader-promtool-'));
    // spec.groups is a Prometheus rule file; JSON is YAML, so promtool reads it as is.
    writeFileSync(join(dir, 'rules.json'), JSON.stringify({ groups: rule.spec.groups }));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs `promtool test rules` on a file holding only `group`. */
  function testGroup(group: TestGroup, file = 'group.json') {
    const path = join(dir, file);
    writeFileSync(path, JSON.stringify({ ...tests, tests: [group] }));
    return runPromtool(['test', 'rules', path], dir);
  }

  it('is a monitoring.coreos.com/v1 PrometheusRule that promtool check rules accepts', () => {
    assert.equal(rule.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(rule.kind, 'PrometheusRule');
    const check = runPromtool(['check', 'rules', 'rules.json'], dir);
    assert.equal(check.status, 0, check.output);
    assert.match(check.output, new RegExp(`SUCCESS: ${alertNames.length} rules found`));
  });

  it('has the four alerts, each tested firing and silent', () => {
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
        `${alert}: a case where it must not`,
      );
    }
  });

  for (const [index, group] of tests.tests.entries()) {
    it(group.name ?? `test group ${index + 1}`, () => {
      const run = testGroup(group, `group-${index + 1}.json`);
      assert.equal(run.status, 0, run.output);
      assert.match(run.output, /SUCCESS/);
    });
  }

  it('fails a group whose expected alert does not fire (the harness can fail)', () => {
    const firing = tests.tests.find((g) => g.alert_rule_test?.some((c) => c.exp_alerts.length))!;
    const silenced: TestGroup = {
      ...firing,
      alert_rule_test: firing.alert_rule_test!.map((c) => ({ ...c, exp_alerts: [] })),
    };
    const run = testGroup(silenced, 'inverted.json');
    assert.notEqual(run.status, 0, run.output);
    assert.match(run.output, /FAILED/);
  });
});
