// Task creation wizard: resources → workload → scheduling → review. Each
// "next" checks the step's fields with the server's rules (spec.ts); a
// server refusal is shown inline and, when it names a field, on that field
// and its step. A created task opens in the task detail. On a hub the same
// wizard places the task on a member cluster (HubTarget): vendor and model
// choices come from the members' devices, the review step chooses the
// member (or the best one), and the hub's answer goes to onPlaced.
import { useMemo, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Alert, Button, Descriptions, Form, Modal, Select, Space, Steps, Tag, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { shellQuote } from '../../nodes/deployCommand';
import { sched, type Device, type NewTask } from '../../../api/scheduling';
import { clusters as hubApi, type Cluster, type HubTask } from '../../../api/clusters';
import { errorText } from '../../../components/notify';
import { ResourcesStep, SchedulingStep, STEP_FIELDS, WorkloadStep } from './Steps';
import { check, DEFAULTS, fieldOfMessage, toSpec, type WizardValues } from './spec';

function Review({ spec }: { spec: NewTask }) {
  const { t } = useTranslation();
  const pairs = (m?: Record<string, string>) =>
    m && Object.keys(m).length ? Object.entries(m).map(([k, v]) => <Tag key={k}>{`${k}=${v}`}</Tag>) : '—';
  const argv = (xs?: string[]) => (xs?.length ? <Typography.Text code>{xs.map(shellQuote).join(' ')}</Typography.Text> : '—');
  return (
    <Descriptions column={2} size="small" bordered data-testid="wizard-review">
      <Descriptions.Item label={t('sched.wizard.name')} span={2}>{spec.name}</Descriptions.Item>
      <Descriptions.Item label={t('sched.wizard.vendor')}>{spec.vendor || t('sched.wizard.anyVendor')}</Descriptions.Item>
      <Descriptions.Item label={t('sched.wizard.models')}>{spec.models?.join(', ') || t('sched.wizard.anyModel')}</Descriptions.Item>
      <Descriptions.Item label={t('sched.wizard.resources')} span={2}>
        <span data-testid="wizard-review-resources">
          {spec.device_count
            ? t('sched.wizard.resourceLine', { n: spec.device_count, mem: spec.memory_mib ?? 0, pct: spec.compute_percent })
            : t('sched.wizard.cpuOnly')}
        </span>
      </Descriptions.Item>
      <Descriptions.Item label={t('sched.wizard.qos')} span={2}>
        {t(`sched.qos.${spec.qos ?? 'bronze'}`)} — {t(`sched.qosHelp.${spec.qos ?? 'bronze'}`)}
      </Descriptions.Item>
      <Descriptions.Item label={t('sched.wizard.command')} span={2}>{spec.image ? spec.image : argv(spec.command)}</Descriptions.Item>
      <Descriptions.Item label={t('sched.wizard.args')} span={2}>{argv(spec.args)}</Descriptions.Item>
      <Descriptions.Item label={t('sched.wizard.env')}>{pairs(spec.env)}</Descriptions.Item>
      <Descriptions.Item label={t('sched.wizard.labels')}>{pairs(spec.labels)}</Descriptions.Item>
      <Descriptions.Item label={t('sched.wizard.priority')}>{spec.priority ?? 0}</Descriptions.Item>
      <Descriptions.Item label={t('sched.wizard.timeout')}>{spec.timeout_seconds || '—'}</Descriptions.Item>
      <Descriptions.Item label={t('sched.wizard.retries')}>{spec.max_retries ?? 0}</Descriptions.Item>
      <Descriptions.Item label={t('sched.wizard.tenant')}>{[spec.tenant, spec.project].filter(Boolean).join(' / ') || '—'}</Descriptions.Item>
      <Descriptions.Item label={t('sched.wizard.gang')} span={2}>
        {spec.gang ? `${spec.gang} × ${spec.gang_size}` : '—'}
      </Descriptions.Item>
    </Descriptions>
  );
}

/** HubTarget makes the wizard place its task through the hub on a member cluster. */
export interface HubTarget {
  members: Cluster[];
  onPlaced: (t: HubTask) => void;
}

/**
 * memberDevices lists the members' devices in the shape the resource step
 * reads (vendor and model choices; a request for more devices of a type
 * than any member has is flagged). Members report devices by vendor and
 * model, not per node or with per-device memory, so node is the member and
 * memory is left unknown.
 */
export function memberDevices(members: Cluster[]): Device[] {
  return members.flatMap((c) =>
    (c.summary?.devices ?? []).flatMap((g) =>
      Array.from({ length: g.total }, (_, i) => ({
        node: c.name, hostname: c.name, online: true, vendor: g.vendor, model: g.model, index: i,
        memory_mib: 0, allocated_memory_mib: 0, allocated_compute_percent: 0, free_compute_percent: 0, state: 'free', slices: [],
      }) as Device),
    ),
  );
}

export default function TaskWizard({
  open,
  onClose,
  onCreated,
  hub,
}: {
  open: boolean;
  onClose: () => void;
  onCreated?: (id: number) => void;
  hub?: HubTarget;
}) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const [form] = Form.useForm<WizardValues>();
  const [step, setStep] = useState(0);
  const [spec, setSpec] = useState<NewTask | null>(null);
  const [target, setTarget] = useState('auto');
  const [serverError, setServerError] = useState<string | null>(null);
  // Vendor and model choices come from the devices actually in the cluster
  // (on a hub: in its members).
  const { data: cluster } = useQuery({ queryKey: ['slices'], queryFn: sched.slices, enabled: open && !hub, meta: { inlineErrors: true } });
  // One entry per member device: built once per members list, not per render.
  const members = hub?.members;
  const fromMembers = useMemo(() => (members ? memberDevices(members) : null), [members]);
  const devices = fromMembers ?? cluster?.items ?? [];

  const create = useMutation({
    mutationFn: async (s: NewTask): Promise<{ id: number; placed?: HubTask }> => {
      if (!hub) return sched.createTask(s);
      const placed = await hubApi.submit({ cluster: target, task: s });
      return { id: placed.id, placed };
    },
    onError: (err) => {
      setServerError(errorText(err));
      const field = err instanceof Error ? fieldOfMessage(err.message) : undefined;
      if (field) {
        form.setFields([{ name: field, errors: [err.message] }]);
        const s = STEP_FIELDS.findIndex((fs) => fs.includes(field));
        if (s >= 0) setStep(s);
      }
    },
    onSuccess: (task) => {
      void qc.invalidateQueries({ queryKey: task.placed ? ['clusters', 'tasks'] : ['tasks'] });
      reset();
      if (task.placed) hub?.onPlaced(task.placed);
      else onCreated?.(task.id);
    },
  });

  function reset() {
    form.resetFields();
    setStep(0);
    setSpec(null);
    setTarget('auto');
    setServerError(null);
  }

  /** validate checks the fields of steps 0..upTo and shows each problem on its field; it returns the first bad step. */
  function validate(upTo: number): number {
    const values = { ...DEFAULTS, ...form.getFieldsValue(true) } as WizardValues;
    const problems = check(values);
    const fields = STEP_FIELDS.slice(0, upTo + 1).flat();
    const all = STEP_FIELDS.flat();
    form.setFields(
      all.map((f) => ({
        name: f,
        errors: fields.includes(f)
          ? problems.filter((p) => p.field === f).map((p) => t(`sched.wizard.err.${p.key}`, p.values ?? {}))
          : [],
      })),
    );
    const bad = problems.find((p) => fields.includes(p.field));
    if (bad) return STEP_FIELDS.findIndex((fs) => fs.includes(bad.field));
    if (upTo >= STEP_FIELDS.length - 1) setSpec(toSpec(values));
    return -1;
  }

  function next() {
    const bad = validate(step);
    if (bad >= 0) {
      setStep(bad);
      return;
    }
    setServerError(null);
    setStep(step + 1);
  }

  const last = STEP_FIELDS.length; // the review step
  return (
    <Modal
      open={open}
      title={hub ? t('clu.submitTitle') : t('sched.wizard.title')}
      width={820}
      onCancel={() => {
        reset();
        onClose();
      }}
      maskClosable={false}
      footer={
        <Space>
          {step > 0 && (
            <Button data-testid="wizard-prev" onClick={() => setStep(step - 1)}>
              {t('sched.wizard.prev')}
            </Button>
          )}
          {step < last ? (
            <Button type="primary" data-testid="wizard-next" onClick={next}>
              {t('sched.wizard.next')}
            </Button>
          ) : (
            <Button
              type="primary"
              data-testid="wizard-submit"
              loading={create.isPending}
              disabled={!spec}
              onClick={() => {
                setServerError(null);
                if (spec) create.mutate(spec);
              }}
            >
              {t('sched.wizard.submit')}
            </Button>
          )}
        </Space>
      }
    >
      <Steps
        current={step}
        size="small"
        style={{ marginBottom: 24 }}
        items={[
          { title: t('sched.wizard.stepResources') },
          { title: t('sched.wizard.stepWorkload') },
          { title: t('sched.wizard.stepScheduling') },
          { title: t('sched.wizard.stepReview') },
        ]}
      />
      {serverError && (
        <Alert
          type="error"
          showIcon
          data-testid="wizard-error"
          message={t('sched.wizard.serverRefused')}
          description={serverError}
          style={{ marginBottom: 16 }}
        />
      )}
      <Form<WizardValues> form={form} layout="vertical" initialValues={DEFAULTS} preserve>
        <div hidden={step !== 0}>
          <ResourcesStep devices={devices} />
        </div>
        <div hidden={step !== 1}>
          <WorkloadStep />
        </div>
        <div hidden={step !== 2}>
          <SchedulingStep />
        </div>
      </Form>
      {step === last && spec && hub && (
        <Form layout="vertical">
          <Form.Item label={t('clu.placement')} extra={t('clu.placementHelp')}>
            <Select
              data-testid="hub-placement"
              value={target}
              onChange={setTarget}
              options={[
                { value: 'auto', label: t('clu.placementAuto') },
                ...hub.members.map((c) => ({ value: c.name, label: c.name, disabled: c.status === 'unreachable' })),
              ]}
            />
          </Form.Item>
        </Form>
      )}
      {step === last && spec && <Review spec={spec} />}
    </Modal>
  );
}
