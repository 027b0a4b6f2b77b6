export * from './agent/update-strategy';
export * from './agent/node-requirement';
export * from './agent/options';
export * from './agent/rollout';
export * from './constructs/node-agent-daemon-set';
export * from './constructs/node-exporter-daemon-set';
export * from './fluent-bit/outputs';
export * from './constructs/log-collector-daemon-set';
