/**
 * Example: the NVIDIA driver on GPU nodes only, gpu-operator-style (a long-running driver container),
 * upgraded node by node.
 *
 *   npx ts-node --project test/tsconfig.json examples/synth-all.ts gpu-driver
 *
 * writes to examples/gpu-driver/dist/:
 * - gpu-driver.k8s.yaml: the namespace (Pod Security `privileged`), the driver DaemonSet, its
 *   ServiceAccount and the ResourceQuota that admits `system-node-critical` pods outside kube-system;
 * - gpu-driver-upgrade.md: the upgrade runbook for this DaemonSet (OnDelete: nothing restarts on
 *   apply; each node is cordoned, emptied of GPU pods, given the new driver, checked, uncordoned);
 * - gpu-driver-upgrade.sh: the same steps as a script (kubectl and jq).
 *
 * The driver image builds the kernel module on nodes whose kernel has no precompiled one: the
 * startupProbe allows 30 minutes for that here.
 */
import * as fs from 'fs';
import * as path from 'path';
import { App, Chart, YamlOutputType } from 'cdk8s';
import { GpuDriverDaemonSet, GpuDriverShape } from 'cdk8s-node-agents';

const outdir = path.join(__dirname, 'dist');
const app = new App({ outdir, yamlOutputType: YamlOutputType.FILE_PER_CHART });
const chart = new Chart(app, 'gpu-driver', { namespace: 'gpu-driver' });

const driver = new GpuDriverDaemonSet(chart, 'nvidia', {
  image: 'nvcr.io/nvidia/driver:595.91.07-ubuntu22.04',
  createNamespace: true,
  shape: GpuDriverShape.driverContainer({ buildTimeSeconds: 30 * 60 }),
  // SELinux hosts (RHEL, OpenShift) need the level on privileged driver containers.
  seLinuxLevel: 's0',
  // Training jobs labelled so finish before their node's driver is replaced; other GPU pods are evicted.
  upgradeWaitForPodSelector: 'example.com/finish-before-driver-upgrade=true',
});

app.synth();

// The runbook belongs next to the YAML it upgrades; plain text, so the committed files are stable.
fs.writeFileSync(path.join(outdir, 'gpu-driver-upgrade.md'), driver.runbook({ manifestFile: 'examples/gpu-driver/dist/gpu-driver.k8s.yaml' }));
fs.writeFileSync(path.join(outdir, 'gpu-driver-upgrade.sh'), driver.runbookScript({ manifestFile: 'examples/gpu-driver/dist/gpu-driver.k8s.yaml' }), { mode: 0o755 });
