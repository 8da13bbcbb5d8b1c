// Workflow templates offered by the editor. The documents are YAML the
// server validates like any other; only their labels are translated.
export interface WorkflowTemplate {
  key: 'trainEval' | 'etl' | 'sweep';
  document: string;
}

export const TEMPLATES: WorkflowTemplate[] = [
  {
    key: 'trainEval',
    document: `name: train-eval
params:
  dataset: /shared/datasets/demo
  targets:
    - {vendor: nvidia}
    - {vendor: ascend}
failure_policy: continue
steps:
  - name: preprocess
    task:
      command: [sh, -c, 'echo rows=1200 >> "$HETEROFLOW_OUTPUTS"']
      cpu_milli: 500
  - name: train
    depends: [preprocess]
    for_each: "{{params.targets}}"
    retries: 1
    timeout_seconds: 3600
    task:
      command: [sh, -c, 'echo training on {{item.vendor}} with {{steps.preprocess.outputs.rows}} rows; echo loss=0.{{index}} >> "$HETEROFLOW_OUTPUTS"']
      vendor: "{{item.vendor}}"
      device_count: 1
      memory_mib: 4096
      compute_percent: 50
  - name: evaluate
    depends: [train]
    task:
      command: [sh, -c, 'echo losses {{steps.train.outputs.loss}}']
  - name: notify
    depends:
      - {step: evaluate, on: always}
    task:
      command: [sh, -c, 'echo workflow {{workflow.id}} evaluated, exit {{steps.evaluate.exit_code}}']
`,
  },
  {
    key: 'etl',
    document: `name: etl-nightly
params:
  day: "2026-01-01"
timeout_seconds: 7200
failure_policy: stop
steps:
  - name: extract
    task: {command: [sh, -c, 'echo extract {{params.day}}'], cpu_milli: 500}
    artifacts:
      raw: /shared/etl/{{params.day}}/raw
  - name: transform
    depends: [extract]
    retries: 2
    task: {command: [sh, -c, 'echo transform {{steps.extract.artifacts.raw}}'], cpu_milli: 1000}
  - name: load
    depends: [transform]
    task: {command: [sh, -c, 'echo load'], cpu_milli: 500}
  - name: cleanup-on-failure
    when: any
    depends:
      - {step: extract, on: failure}
      - {step: transform, on: failure}
      - {step: load, on: failure}
    task: {command: [sh, -c, 'echo cleaning up']}
`,
  },
  {
    key: 'sweep',
    document: `name: lr-sweep
params:
  rates: ["0.1", "0.01", "0.001"]
steps:
  - name: sweep
    for_each: "{{params.rates}}"
    gang: true
    task:
      command: [sh, -c, 'echo lr={{item}} >> "$HETEROFLOW_OUTPUTS"']
      vendor: nvidia
      device_count: 1
      compute_percent: 30
      memory_mib: 2048
  - name: pick-best
    depends: [sweep]
    task:
      command: [sh, -c, 'echo rates tried {{steps.sweep.outputs.lr}}']
`,
  },
];
