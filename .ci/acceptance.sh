#!/usr/bin/env bash
# Acceptance: an app on today's newest cdk8s-plus major uses the packed package (dist/js/*.tgz) and nothing else.
# In a new temporary directory: the dependencies `cdk8s init typescript-app` gives an app (cdk8s, constructs, the
# newest cdk8s-plus major, cdk8s-cli, ts-node, typescript; `cdk8s init` itself also imports the Kubernetes API from
# outside the npm registry, which CI cannot reach), then `npm install` of the packed package alone. The app
# synthesizes the README's example, a canary rollout and an agent whose env, probes, preStop hook and ports use the
# library's own types, next to an object of its own cdk8s-plus major. Checked: the app's code imports nothing from
# cdk8s-plus-28 and its package.json does not list it (npm installed it as the library's peer), and the YAML holds
# what each part renders. Only the npm registry is needed.
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/packed-tarball.sh
tarball="$(packed_tarball acceptance)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# today's newest cdk8s-plus major (move it when a newer one is published; ACCEPTANCE_CDK8S_PLUS overrides it)
plus="${ACCEPTANCE_CDK8S_PLUS:-cdk8s-plus-34}"
echo "== the app, on $plus, in $work"
cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund cdk8s constructs "$plus"
npm install --no-audit --no-fund --save-dev cdk8s-cli ts-node 'typescript@~6.0' @types/node
echo "== npm install of the packed package alone"
npm install --no-audit --no-fund "$tarball"

cat > tsconfig.json <<'JSON'
{
  "compilerOptions": {
    "target": "ES2022",
    "module": "commonjs",
    "moduleResolution": "node",
    "strict": true,
    "esModuleInterop": true,
    "skipLibCheck": true,
    "types": ["node"]
  }
}
JSON
printf 'language: typescript\napp: npx ts-node main.ts\n' > cdk8s.yaml

# the README's example, from the section CI's quickstart runs
node - "$OLDPWD/README.md" > readme-example.ts <<'NODE'
const readme = require('fs').readFileSync(process.argv[2], 'utf8');
const start = readme.indexOf('## Use it in your cdk8s app');
const m = /<!-- quickstart:file main\.ts -->\s*\n```ts\n([\s\S]*?)```/.exec(readme.slice(start));
if (start < 0 || !m) throw new Error('README: the quickstart main.ts block was not found');
// the example as a function of a chart: its own App and synth() dropped
const body = m[1]
  .replace(/^const app = new App\(\);\n/m, '')
  .replace(/^const chart = new Chart\(app, '[^']*'\);\n/m, '')
  .replace(/^app\.synth\(\);\n?/m, '');
const imports = body.split('\n').filter((l) => l.startsWith('import ')).join('\n');
const rest = body.split('\n').filter((l) => !l.startsWith('import ')).join('\n');
console.log(`${imports}\n\nexport function readmeExample(chart: Chart): void {\n${rest}\n}`);
NODE

cat > main.ts <<TS
import { App, Chart } from 'cdk8s';
import * as plus from '$plus';
import {
  AgentEnvFieldPath, AgentEnvValue, AgentHandler, AgentProbe, AgentProtocol, FluentBitOutput, LogCollectorDaemonSet,
  LogCollectorDaemonSetProps, NodeAgentDaemonSet, Promotion, RolloutWave,
} from 'cdk8s-node-agents';
import { readmeExample } from './readme-example';

const app = new App();
readmeExample(new Chart(app, 'readme'));

// a canary rollout: the previous release held everywhere but the canary wave
const canary = new Chart(app, 'canary');
const PREVIOUS: LogCollectorDaemonSetProps = {
  image: 'cr.fluentbit.io/fluent/fluent-bit:5.1.1',
  outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc', port: 80 })],
};
new LogCollectorDaemonSet(canary, 'logs', {
  ...PREVIOUS,
  extraEnv: { CLUSTER: AgentEnvValue.fromValue('prod-eu-1') },
  rollout: {
    waves: [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')],
    previous: LogCollectorDaemonSet.release(PREVIOUS),
    promoted: Promotion.through('canary'),
  },
});

// every input that took a cdk8s-plus object, with the library's own types; beside it the app's own major
const own = new Chart(app, 'own-types');
new NodeAgentDaemonSet(own, 'agent', {
  name: 'example-agent',
  image: 'registry.example/agent:1.0.0',
  env: {
    LOG_LEVEL: AgentEnvValue.fromValue('info'),
    TOKEN: AgentEnvValue.fromSecret('agent-token', 'token'),
    REGION: AgentEnvValue.fromConfigMap('cluster-info', 'region', { optional: true }),
  },
  fieldEnv: { NODE_NAME: AgentEnvFieldPath.NODE_NAME },
  ports: [{ name: 'metrics', containerPort: 9500, protocol: AgentProtocol.TCP }],
  readiness: AgentProbe.fromHttpGet('/ready', { port: 9500 }),
  liveness: AgentProbe.fromTcpSocket({ port: 9500 }),
  preStop: AgentHandler.fromCommand(['sleep', '5']),
});
new plus.ConfigMap(own, 'app-config', { data: { made: 'with $plus' } });

app.synth();
TS

echo "== npx cdk8s synth"
npx cdk8s synth

echo "== checks"
# the app's code imports nothing of cdk8s-plus-28, and it is no dependency of the app's own
if grep -nE "(from|require\()\s*'cdk8s-plus-28'" main.ts readme-example.ts \
  || node -e 'const p = require("./package.json"); process.exit(["dependencies", "devDependencies"].some((k) => (p[k] || {})["cdk8s-plus-28"]) ? 0 : 1)'; then
  echo "acceptance: the app imports or lists cdk8s-plus-28; it should need nothing of it" >&2
  exit 1
fi
[ -d node_modules/cdk8s-plus-28 ] || { echo "acceptance: npm did not install the library's peer cdk8s-plus-28" >&2; exit 1; }
expect() { # file, pattern, what
  grep -q -- "$2" "dist/$1" || { echo "acceptance: dist/$1 lacks $3" >&2; exit 1; }
}
expect readme.k8s.yaml '^  name: log-collector$' "the README's log collector"
expect readme.k8s.yaml '^  name: node-exporter$' "the README's node exporter"
expect canary.k8s.yaml '^  name: log-collector-canary$' 'the canary wave DaemonSet'
expect canary.k8s.yaml 'value: prod-eu-1' 'the extraEnv value'
expect own-types.k8s.yaml 'secretKeyRef:' 'the Secret reference'
expect own-types.k8s.yaml 'configMapKeyRef:' 'the ConfigMap reference'
expect own-types.k8s.yaml 'fieldPath: spec.nodeName' 'the field reference'
expect own-types.k8s.yaml 'path: /ready' 'the HTTP readiness probe'
expect own-types.k8s.yaml 'preStop:' 'the preStop hook'
expect own-types.k8s.yaml "made: with $plus" "the app's own $plus ConfigMap"
ls dist
echo "acceptance passed: an app on $plus, with the packed package alone"
