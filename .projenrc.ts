import { cdk8s, javascript } from 'projen';

const project = new cdk8s.ConstructLibraryCdk8s({
  name: 'cdk8s-node-agents',
  packageName: 'cdk8s-node-agents',
  description:
    'cdk8s constructs for node agents (log collectors, node-exporter, GPU drivers, CNI and storage agents): ' +
    'DaemonSets with safe defaults, synth-time checks and canary rollout waves.',
  author: 'cdk8s-node-agents maintainers',
  authorAddress: 'maintainers@users.noreply.a-seed-d2ae0a55.example',
  repositoryUrl: 'https://github.com/maintainers/cdk8s-node-agents.git',
  defaultReleaseBranch: 'main',
  keywords: ['cdk8s', 'kubernetes', 'daemonset', 'node-agent', 'fluent-bit', 'node-exporter', 'gpu', 'canary'],
  packageManager: javascript.NodePackageManager.NPM,
  projenrcTs: true,

  // jsii 6.0 compiles with TypeScript 6.0; an unpinned typescript resolves to 7.x,
  // which neither jsii nor ts-node supports.
  jsiiVersion: '~6.0.0',
  typescriptVersion: '~6.0.0',

  cdk8sVersion: '2.70.106',
  constructsVersion: '10.4.2',
  // cdk8s-plus-28 stays a peer dependency. No prop takes a cdk8s-plus type (the inputs are the library's own types,
  // test/project/inputs-free-of-kplus.test.ts), but the escape hatches (daemonSet, mainContainer, configMap,
  // serviceAccount) are cdk8s-plus-28 objects: jsii requires a dependency whose types the API exposes to be a peer
  // (it refuses one that is bundled), and each language binding resolves it as its own package. npm installs peers
  // itself, so `npm install cdk8s-node-agents` in an app on another cdk8s-plus major puts cdk8s-plus-28 beside it
  // with nothing more to install; the app never imports it.
  peerDeps: ['cdk8s-plus-28@^2.5.6'],
  // the CLI reads YAML manifests; cdk8s already depends on this package.
  // luaparse: the Lua filters' scripts are parsed at synthesis, in the LuaJIT dialect fluent-bit runs.
  // @prometheus-io/lezer-promql (with its peers @lezer/lr and @lezer/highlight, and @lezer/common, whose syntax
  // tree it returns): Prometheus's own PromQL grammar, which every expression the alerts and gates write or take
  // is parsed with at synthesis.
  bundledDeps: [
    'yaml@^2.8.1', 'luaparse@^0.3.1', '@prometheus-io/lezer-promql@^0.315.0', '@lezer/lr@^1.4.12', '@lezer/highlight@^1.2.5', '@lezer/common@^1.5.5',
  ],
  minNodeVersion: '20.16.0',
  devDeps: [
    '@types/node@^20',
    '@types/luaparse@^0.2.13',
    // Kubernetes schema validation for every manifest a test synthesizes (CommonJS build).
    'kubernetes-models@^4.5.1',
    '@kubernetes-models/prometheus-operator@^4.4.4',
    // Argo CD Application/ApplicationSet schemas (2.x: the CommonJS build; 4.x is ESM-only and needs Node 22).
    '@kubernetes-models/argo-cd@^2.7.2',
    // property-based tests: one DaemonSet per node per agent, determinism.
    'fast-check@^4.3.0',
    // the readiness taint's ValidatingAdmissionPolicy: its CEL evaluated in the test API server, as the API server does.
    '@bufbuild/cel@^0.6.1',
  ],

  // Nothing runs GitHub workflows for this repository.
  github: false,
  release: false,
  buildWorkflow: false,
  depsUpgrade: false,
  pullRequestTemplate: false,
  docgen: true,

  jestOptions: {
    // The plain test command must never rewrite snapshots: update them with `npx projen test:update`.
    updateSnapshot: javascript.UpdateSnapshot.NEVER,
    // Examples import the package by its name, as a consumer would; here the name is the source.
    jestConfig: {
      moduleNameMapper: { '^cdk8s-node-agents$': '<rootDir>/src/index.ts' },
      // A worker per core: jest's default (cores - 1) runs the suites in band on a 2-core machine, twice as slow.
      maxWorkers: '100%',
    },
  },
  tsconfigDev: {
    // The package name for examples (and tests), resolved to the source (paths are relative to test/tsconfig.json;
    // baseUrl is deprecated in TypeScript 6). ts-node's runtime resolution is a hook in examples/synth-all.ts.
    compilerOptions: { paths: { 'cdk8s-node-agents': ['../src/index.ts'] } },
    include: ['../examples/**/*.ts', '../bench/**/*.ts'],
  },
  eslintOptions: {
    dirs: ['src'],
    devdirs: ['test', 'examples', 'bench', 'projenrc', '.projenrc.ts'],
    // projen's default ignores every folder named coverage; only jest's output folder is meant.
    ignorePatterns: ['*.js', '*.d.ts', 'node_modules/', '*.generated.ts', '/coverage'],
  },
  gitignore: ['/examples/**/cdk8s.out/', '/.tmp/'],

  // Bindings for the other jsii languages, named after the repository (github.com/maintainers/cdk8s-node-agents).
  // Nothing publishes them (release is false); .ci/bindings.sh generates each one's code from the compiled
  // assembly and checks what this machine can (see docs/bindings.md).
  publishToPypi: { distName: 'cdk8s-node-agents', module: 'cdk8s_node_agents' },
  publishToMaven: {
    mavenGroupId: 'io.github.maintainers',
    mavenArtifactId: 'cdk8s-node-agents',
    javaPackage: 'io.github.maintainers.cdk8s.nodeagents',
  },
  publishToNuget: { dotNetNamespace: 'Cdk8sNodeAgents', packageId: 'Cdk8sNodeAgents' },
  publishToGo: { moduleName: 'github.com/maintainers/cdk8s-node-agents-go', packageName: 'cdk8snodeagents' },
});

// projen compiles with --silence-warnings=reserved-word; this project keeps jsii's reserved-word warnings visible.
// The names that trigger them are public API kept on purpose, each listed with its reason in
// test/project/reserved-words.ts; test/project/reserved-words.test.ts fails when a new one appears.
project.compileTask.reset('jsii');
project.watchTask.reset('jsii -w');

// `npx projen package` packs the npm package only: the other languages' packaging needs their toolchains and
// registries (pip, maven, dotnet, go). `npx projen package-all` packs every language where they are present;
// .ci/bindings.sh generates and checks every language's code without them.
project.packageTask.reset();
project.packageTask.spawn(project.tasks.tryFind('package:js')!);

// examples and benchmarks sit outside every tsconfig: lint them with the default project.
project.eslint?.allowDefaultProjectFiles('examples/*.ts', 'examples/*/main.ts', 'bench/*.ts');
// typescript-eslint refuses more than 8 default-project files unless told; every example and bench adds one.
project.eslint?.file.addOverride('parserOptions.projectService.maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING', 32);

// The two wings of src/ never import each other, and the shared floors import neither (CONTRIBUTING.md's Layout;
// test/project/layout.test.ts checks the floors within each wing and what each product loads).
const LIBRARY_WING = ['adoption', 'agent', 'alerts', 'constructs', 'fleet', 'fluent-bit', 'gpu', 'node-exporter', 'render'].map((d) => `./src/${d}`);
const SHARED_FLOORS = ['rollout', 'scheduling', 'util', 'validation', 'waves'].map((d) => `./src/${d}`);
project.eslint?.addRules({
  'import/no-restricted-paths': ['error', {
    zones: [
      { target: ['./src/cli'], from: LIBRARY_WING, message: 'the tools (src/cli/) do not import the library wing: move the shared fact to a floor (rollout, waves, scheduling, validation, util)' },
      { target: LIBRARY_WING, from: ['./src/cli'], message: 'the library does not import the tools (src/cli/): move the shared fact to a floor (rollout, waves, scheduling, validation, util)' },
      { target: SHARED_FLOORS, from: [...LIBRARY_WING, './src/cli'], message: 'a shared floor imports neither wing' },
    ],
  }],
});

// Examples import the package by its name: resolve it for eslint through test/tsconfig.json's paths too.
const eslintrc = project.tryFindObjectFile('.eslintrc.json');
eslintrc?.addOverride('settings.import/resolver.typescript.project', ['./tsconfig.json', './test/tsconfig.json']);
eslintrc?.addOverride('settings.import/resolver.typescript.noWarnOnMultipleProjects', true);

project.addPackageIgnore('/examples/');
project.addPackageIgnore('/bench/');
project.addPackageIgnore('/.ci/');

// projen's default ignores every folder named coverage, src/coverage (the node coverage analysis) too.
project.gitignore.removePatterns('coverage');

project.package.addField('bin', { 'node-agents': 'lib/cli/main.js' });

// The release line: with release false, projen writes version 0.0.0; the version is set here instead, by hand, with
// its entry in CHANGELOG.md (docs/stability.md: 0.x, what may still change).
project.package.addVersion('0.1.0');

// The deliberate snapshot update (`npx projen test:update`); the plain test task never writes snapshots.
project.tasks.tryFind('test:update')?.reset('jest -u --passWithNoTests --ci', { receiveArgs: true });

// Examples: each example is a cdk8s app under examples/<name>/main.ts writing YAML to examples/<name>/dist/.
const synthExamples = project.addTask('synth:examples', {
  description: 'Synthesize every example app to YAML under examples/<name>/dist/',
  exec: 'ts-node --project test/tsconfig.json examples/synth-all.ts',
});
project.postCompileTask.spawn(synthExamples);

// ts-jest transpiles tests without type-checking them (isolatedModules): check tests and examples here.
const typecheck = project.addTask('typecheck', {
  description: 'Type-check tests, examples and benchmarks',
  exec: 'tsc --noEmit -p test/tsconfig.json',
});
project.testTask.prependSpawn(typecheck);
// The tests read what the compile writes (.jsii: the struct-shapes test checks the generated type table against
// it; lib/cli/main.js: the bin test), so the test task compiles first: the README's test command passes on a
// fresh clone by itself.
project.testTask.prependSpawn(project.compileTask);

// The runtime type checks are generated from the jsii assembly (every prop of every public struct, with
// no second description to keep in step): after jsii writes .jsii, projenrc/struct-shapes.ts rewrites
// src/validation/struct-shapes.generated.ts and, when it changed, compiles once more. A build that changes
// the checked-in file fails CI, so a stale one cannot ship.
project.compileTask.exec('ts-node --transpile-only --project projenrc/tsconfig.json projenrc/struct-shapes.ts');

// test/upstream/: the upstream facts the tests check against, derived from copies of the upstream files.
project.addTask('upstream:data', {
  description: 'Regenerate test/upstream/ from a folder of upstream copies: npx projen upstream:data -- <folder> [--check]',
  exec: 'ts-node --transpile-only --project projenrc/tsconfig.json projenrc/upstream-data.ts',
  receiveArgs: true,
});
project.gitattributes.addAttributes('/test/upstream/**', 'linguist-generated');

// docs/tested-against.md: the versions the tests check against, generated from test/upstream/'s sources, the
// default images and package-lock.json; test/project/tested-against.test.ts fails when it is stale.
project.addTask('tested-against', {
  description: 'Regenerate docs/tested-against.md from the pinned upstream data, default images and locked packages',
  exec: 'ts-node --transpile-only --project projenrc/tsconfig.json projenrc/tested-against.ts',
});

project.addTask('bench', {
  description: 'Run the benchmarks and print figures (not part of the test run)',
  exec: 'ts-node --project test/tsconfig.json bench/run-all.ts',
  receiveArgs: true,
});

project.synth();
