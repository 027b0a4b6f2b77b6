/**
 * Every command-line flag node_exporter 1.12.1 accepts on Linux, for checking `extraArgs`: kingpin
 * (alecthomas/kingpin v2.4.0, flags.go `flagGroup.parse`) exits at start on a flag it does not
 * know ("unknown long flag"), on `--no-` before a flag that is not a bool, on a value flag without
 * a value ("expected argument for flag") and on a bool flag given `=value` (the value becomes an
 * argument the exporter takes none of: "unexpected <value>").
 *
 * Sources (tag v1.12.1 of prometheus/node_exporter): every `kingpin.Flag("<name>", ...)` in
 * node_exporter.go and in the collector/*.go files that build on Linux (file suffix and `//go:build`
 * line), bool when declared `.Bool()`; `--collector.<name>` for every registered collector
 * (collector/collector.go `registerCollector`, a bool, see ./collectors.ts); exporter-toolkit
 * v0.17.1 web/kingpinflag/flag.go (`--web.listen-address`, `--web.systemd-socket` on Linux,
 * `--web.config.file`); prometheus/common v0.70.0 promslog/flag/flag.go (`--log.level`,
 * `--log.format`); kingpin's own app.go (`--help`, `--version` and the hidden completion and man
 * page flags). Hidden flags (deprecated aliases) are accepted by the parser and listed. Pure data.
 */

/** Bool flags besides `--collector.<name>` (each also accepted as `--no-<flag>`). */
export const BOOL_FLAGS: readonly string[] = [
  'collector.arp.netlink', 'collector.bcache.priorityStats', 'collector.cpu.guest', 'collector.cpu.info',
  'collector.disable-defaults', 'collector.interrupts.include-zeros', 'collector.netclass.ignore-invalid-speed',
  'collector.netclass.netlink', 'collector.netclass_rtnl.with-stats', 'collector.netdev.address-info',
  'collector.netdev.enable-detailed-metrics', 'collector.netdev.label-ifalias', 'collector.netdev.netlink',
  'collector.ntp.server-is-local', 'collector.pcidevice.names', 'collector.perf.disable-cache-profilers',
  'collector.perf.disable-hardware-profilers', 'collector.perf.disable-software-profilers',
  'collector.rapl.enable-zone-label', 'collector.stat.softirq', 'collector.systemd.enable-restarts-metrics',
  'collector.systemd.enable-start-time-metrics', 'collector.systemd.enable-task-metrics',
  'collector.systemd.private', 'web.disable-exporter-metrics',
  // exporter-toolkit
  'web.systemd-socket',
];

/** Flags that take a value (`--flag=value`). */
export const VALUE_FLAGS: readonly string[] = [
  'collector.arp.device-exclude', 'collector.arp.device-include', 'collector.cpu.info.bugs-include',
  'collector.cpu.info.flags-include', 'collector.diskstats.device-exclude', 'collector.diskstats.device-include',
  'collector.diskstats.ignored-devices', 'collector.ethtool.device-exclude', 'collector.ethtool.device-include',
  'collector.ethtool.metrics-include', 'collector.filesystem.fs-types-exclude',
  'collector.filesystem.fs-types-include', 'collector.filesystem.ignored-fs-types',
  'collector.filesystem.ignored-mount-points', 'collector.filesystem.mount-points-exclude',
  'collector.filesystem.mount-points-include', 'collector.filesystem.mount-timeout',
  'collector.filesystem.stat-workers', 'collector.hwmon.chip-exclude', 'collector.hwmon.chip-include',
  'collector.hwmon.sensor-exclude', 'collector.hwmon.sensor-include', 'collector.infiniband.device-exclude',
  'collector.infiniband.device-include', 'collector.interrupts.name-exclude', 'collector.interrupts.name-include',
  'collector.ipvs.backend-labels', 'collector.netclass.ignored-devices', 'collector.netdev.device-blacklist',
  'collector.netdev.device-exclude', 'collector.netdev.device-include', 'collector.netdev.device-whitelist',
  'collector.netstat.fields', 'collector.ntp.ip-ttl', 'collector.ntp.local-offset-tolerance',
  'collector.ntp.max-distance', 'collector.ntp.protocol-version', 'collector.ntp.server',
  'collector.ntp.server-port', 'collector.pcidevice.idsfile', 'collector.perf.cache-profilers',
  'collector.perf.cpus', 'collector.perf.hardware-profilers', 'collector.perf.software-profilers',
  'collector.perf.tracepoint', 'collector.powersupply.ignored-supplies', 'collector.qdisc.device-exclude',
  'collector.qdisc.device-include', 'collector.qdisc.fixtures', 'collector.qdisk.device-exclude',
  'collector.qdisk.device-include', 'collector.runit.servicedir', 'collector.slabinfo.slabs-exclude',
  'collector.slabinfo.slabs-include', 'collector.supervisord.url', 'collector.sysctl.include',
  'collector.sysctl.include-info', 'collector.systemd.unit-blacklist', 'collector.systemd.unit-exclude',
  'collector.systemd.unit-include', 'collector.systemd.unit-whitelist', 'collector.tapestats.ignored-devices',
  'collector.textfile.directory', 'collector.vmstat.fields', 'collector.wifi.fixtures', 'path.procfs', 'path.rootfs',
  'path.sysfs', 'path.udev.data', 'runtime.gomaxprocs', 'web.max-requests', 'web.telemetry-path',
  // exporter-toolkit, promslog
  'web.listen-address', 'web.config.file', 'log.level', 'log.format',
];

/** Flags that print something and exit (kingpin's help, version, completion and man page): the pod would restart for ever. */
export const EXITING_FLAGS: readonly string[] = [
  'help', 'help-long', 'help-man', 'version', 'completion-bash', 'completion-script-bash', 'completion-script-zsh',
];

/**
 * Flags node_exporter refuses beside one the construct always writes: the collector's constructor
 * returns "... are mutually exclusive" and the exporter panics at start ("Couldn't create metrics
 * handler", node_exporter.go `newHandler`). From collector/filesystem_common.go
 * (`newMountPointsFilter`, `newFSTypeFilter`) and collector/netdev_common.go (`NewNetDevCollector`).
 */
export const EXCLUSIVE_WITH_WRITTEN: { readonly [flag: string]: string } = {
  'collector.filesystem.ignored-mount-points': 'collector.filesystem.mount-points-exclude',
  'collector.filesystem.mount-points-include': 'collector.filesystem.mount-points-exclude',
  'collector.filesystem.ignored-fs-types': 'collector.filesystem.fs-types-exclude',
  'collector.filesystem.fs-types-include': 'collector.filesystem.fs-types-exclude',
  'collector.netdev.device-blacklist': 'collector.netdev.device-exclude',
  'collector.netdev.device-include': 'collector.netdev.device-exclude',
  'collector.netdev.device-whitelist': 'collector.netdev.device-exclude',
};
