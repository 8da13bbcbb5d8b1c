// The wizard's form sections, one per step. They stay mounted (hidden when
// not current) so values and errors survive moving back and forth.
import { Alert, AutoComplete, Checkbox, Col, Form, Input, InputNumber, Radio, Row, Select, Space, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { QOS_LEVELS, type Device } from '../../../api/scheduling';
import { LIMITS, neverFits, type WizardValues } from './spec';

export const STEP_FIELDS: (keyof WizardValues)[][] = [
  ['name', 'vendor', 'models', 'device_count', 'memory_mib', 'memory_unit', 'compute_percent', 'qos', 'wait_for_nodes', 'allow_best_effort'],
  ['mode', 'command', 'image', 'args', 'env', 'labels'],
  ['priority', 'timeout_seconds', 'max_retries', 'tenant', 'project', 'gang', 'gang_size'],
];

function uniq(xs: string[]): string[] {
  return [...new Set(xs.filter(Boolean))].sort();
}

/** ResourcesStep: what the task needs — vendor/model from the cluster, devices, memory, compute, QoS. */
export function ResourcesStep({ devices }: { devices: Device[] }) {
  const { t } = useTranslation();
  const form = Form.useFormInstance<WizardValues>();
  const vendor = Form.useWatch('vendor', form);
  const vendors = uniq(devices.map((d) => d.vendor));
  const models = uniq(devices.filter((d) => !vendor || d.vendor === vendor).map((d) => d.model));
  const maxMem = Math.max(0, ...devices.filter((d) => !vendor || d.vendor === vendor).map((d) => d.memory_mib));
  const unit = Form.useWatch('memory_unit', form) ?? 'MiB';
  const qos = Form.useWatch('qos', form);
  const watched = {
    device_count: Form.useWatch('device_count', form),
    memory_mib: Form.useWatch('memory_mib', form),
    memory_unit: unit,
    vendor,
    models: Form.useWatch('models', form),
  };
  const never = neverFits(watched, devices);
  return (
    <>
      <Form.Item name="name" label={t('sched.wizard.name')} required>
        <Input data-testid="wizard-name" maxLength={LIMITS.nameLen} />
      </Form.Item>
      <Row gutter={16}>
        <Col span={12}>
          <Form.Item name="vendor" label={t('sched.wizard.vendor')} extra={t('sched.wizard.vendorHint')}>
            <AutoComplete
              data-testid="wizard-vendor"
              allowClear
              options={vendors.map((v) => ({ value: v }))}
              placeholder={t('sched.wizard.anyVendor')}
            />
          </Form.Item>
        </Col>
        <Col span={12}>
          <Form.Item name="models" label={t('sched.wizard.models')} extra={t('sched.wizard.modelsHint')}>
            <Select
              data-testid="wizard-models"
              mode="tags"
              allowClear
              options={models.map((m) => ({ value: m, label: m }))}
              placeholder={t('sched.wizard.anyModel')}
            />
          </Form.Item>
        </Col>
      </Row>
      <Row gutter={16}>
        <Col span={8}>
          <Form.Item name="device_count" label={t('sched.wizard.deviceCount')} extra={t('sched.wizard.deviceCountHint')}>
            <InputNumber data-testid="wizard-devices" min={0} max={LIMITS.devices} precision={0} style={{ width: '100%' }} />
          </Form.Item>
        </Col>
        <Col span={8}>
          <Form.Item
            name="memory_mib"
            label={t('sched.wizard.memory')}
            extra={maxMem ? t('sched.wizard.memoryHint', { max: maxMem }) : undefined}
          >
            <InputNumber
              data-testid="wizard-memory"
              min={0}
              precision={unit === 'GiB' ? 2 : 0}
              step={unit === 'GiB' ? 1 : 1024}
              style={{ width: '100%' }}
              addonAfter={
                <Form.Item name="memory_unit" noStyle>
                  <Select
                    data-testid="wizard-memory-unit"
                    style={{ width: 76 }}
                    options={[
                      { value: 'MiB', label: 'MiB' },
                      { value: 'GiB', label: 'GiB' },
                    ]}
                  />
                </Form.Item>
              }
            />
          </Form.Item>
        </Col>
        <Col span={8}>
          <Form.Item name="compute_percent" label={t('sched.wizard.compute')} extra={t('sched.wizard.computeHint')}>
            <InputNumber data-testid="wizard-compute" min={10} max={100} precision={0} step={5} style={{ width: '100%' }} />
          </Form.Item>
        </Col>
      </Row>
      {never && (
        <Alert
          type="warning"
          showIcon
          data-testid="wizard-never-fits"
          style={{ marginBottom: 16 }}
          message={t('sched.wizard.neverFits')}
          description={
            <Space direction="vertical" size={4}>
              {t(`sched.wizard.neverFits_${never.key}`, { n: never.n, max: never.max })}
              <Form.Item name="wait_for_nodes" valuePropName="checked" noStyle>
                <Checkbox data-testid="wizard-wait-for-nodes">{t('sched.wizard.waitForNodes')}</Checkbox>
              </Form.Item>
            </Space>
          }
        />
      )}
      <Form.Item name="qos" label={t('sched.wizard.qos')}>
        <Radio.Group data-testid="wizard-qos">
          <Space direction="vertical">
            {QOS_LEVELS.map((q) => (
              <Radio key={q} value={q} data-testid={`wizard-qos-${q}`}>
                <Typography.Text strong>{t(`sched.qos.${q}`)}</Typography.Text>
                <Typography.Text type="secondary"> — {t(`sched.qosHelp.${q}`)}</Typography.Text>
              </Radio>
            ))}
          </Space>
        </Radio.Group>
      </Form.Item>
      {qos === 'silver' && (
        <Form.Item name="allow_best_effort" valuePropName="checked" extra={t('sched.wizard.bestEffortHelp')}>
          <Checkbox data-testid="wizard-best-effort">{t('sched.wizard.bestEffort')}</Checkbox>
        </Form.Item>
      )}
    </>
  );
}

/** WorkloadStep: what runs — a command line or an image, arguments, environment and labels. */
export function WorkloadStep() {
  const { t } = useTranslation();
  const form = Form.useFormInstance<WizardValues>();
  const mode = Form.useWatch('mode', form);
  return (
    <>
      <Form.Item name="mode" label={t('sched.wizard.mode')}>
        <Radio.Group
          optionType="button"
          options={[
            { value: 'command', label: t('sched.wizard.modeCommand') },
            { value: 'image', label: t('sched.wizard.modeImage') },
          ]}
        />
      </Form.Item>
      {mode === 'image' ? (
        <Form.Item name="image" label={t('sched.wizard.image')} required>
          <Input data-testid="wizard-image" placeholder="registry.example.com/team/train:1.0" />
        </Form.Item>
      ) : (
        <Form.Item name="command" label={t('sched.wizard.command')} required extra={t('sched.wizard.commandHint')}>
          <Input data-testid="wizard-command" placeholder={`sh -c 'python train.py'`} />
        </Form.Item>
      )}
      <Form.Item name="args" label={t('sched.wizard.args')} extra={t('sched.wizard.argsHint')}>
        <Input data-testid="wizard-args" />
      </Form.Item>
      <Row gutter={16}>
        <Col span={12}>
          <Form.Item name="env" label={t('sched.wizard.env')} extra={t('sched.wizard.pairsHint')}>
            <Input.TextArea data-testid="wizard-env" rows={3} placeholder="EPOCHS=3" />
          </Form.Item>
        </Col>
        <Col span={12}>
          <Form.Item name="labels" label={t('sched.wizard.labels')} extra={t('sched.wizard.pairsHint')}>
            <Input.TextArea data-testid="wizard-labels" rows={3} placeholder="team=vision" />
          </Form.Item>
        </Col>
      </Row>
    </>
  );
}

/** SchedulingStep: priority, limits, tenant/project (quotas) and gang membership. */
export function SchedulingStep() {
  const { t } = useTranslation();
  const num = (name: keyof WizardValues, label: string, max: number, testid: string, extra?: string) => (
    <Col span={8}>
      <Form.Item name={name} label={label} extra={extra}>
        <InputNumber data-testid={testid} min={0} max={max} precision={0} style={{ width: '100%' }} />
      </Form.Item>
    </Col>
  );
  return (
    <>
      <Row gutter={16}>
        {num('priority', t('sched.wizard.priority'), LIMITS.priority, 'wizard-priority', t('sched.wizard.priorityHint'))}
        {num('timeout_seconds', t('sched.wizard.timeout'), LIMITS.timeout, 'wizard-timeout', t('sched.wizard.timeoutHint'))}
        {num('max_retries', t('sched.wizard.retries'), LIMITS.retries, 'wizard-retries')}
      </Row>
      <Row gutter={16}>
        <Col span={12}>
          <Form.Item name="tenant" label={t('sched.wizard.tenant')} extra={t('sched.wizard.tenantHint')}>
            <Input data-testid="wizard-tenant" />
          </Form.Item>
        </Col>
        <Col span={12}>
          <Form.Item name="project" label={t('sched.wizard.project')}>
            <Input data-testid="wizard-project" />
          </Form.Item>
        </Col>
      </Row>
      <Row gutter={16}>
        <Col span={12}>
          <Form.Item name="gang" label={t('sched.wizard.gang')} extra={t('sched.wizard.gangHint')}>
            <Input data-testid="wizard-gang" />
          </Form.Item>
        </Col>
        <Col span={12}>
          <Form.Item name="gang_size" label={t('sched.wizard.gangSize')}>
            <InputNumber data-testid="wizard-gang-size" min={1} max={LIMITS.devices * 16} precision={0} style={{ width: '100%' }} />
          </Form.Item>
        </Col>
      </Row>
    </>
  );
}
