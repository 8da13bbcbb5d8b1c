// New workflow: a YAML/JSON editor with templates, validation against the
// server as you type (POST /workflows/validate: the error names the step at
// fault) and a preview of the graph; submit opens the new workflow.
import { useEffect, useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { Alert, Button, Input, Modal, Select, Space, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { workflows, type WorkflowPlan } from '../../api/workflows';
import { errorText, showError, showSuccess } from '../../components/notify';
import DagGraph from './DagGraph';
import { TEMPLATES } from './templates';

type Check = { kind: 'idle' } | { kind: 'checking' } | { kind: 'ok'; plan: WorkflowPlan } | { kind: 'error'; text: string };

export default function WorkflowEditor({
  open,
  onClose,
  onCreated,
}: {
  open: boolean;
  onClose: () => void;
  onCreated: (id: number) => void;
}) {
  const { t } = useTranslation();
  const [doc, setDoc] = useState('');
  const [check, setCheck] = useState<Check>({ kind: 'idle' });

  const validate = async (text: string) => {
    if (!text.trim()) {
      setCheck({ kind: 'idle' });
      return;
    }
    setCheck({ kind: 'checking' });
    try {
      const plan = await workflows.validate({ document: text });
      setCheck({ kind: 'ok', plan });
    } catch (err) {
      setCheck({ kind: 'error', text: errorText(err) });
    }
  };

  // Validate a moment after typing stops.
  useEffect(() => {
    if (!open) return;
    const h = setTimeout(() => void validate(doc), 600);
    return () => clearTimeout(h);
  }, [doc, open]);

  const submit = useMutation({
    mutationFn: () => workflows.submit({ document: doc }),
    onSuccess: (w) => {
      showSuccess(t('wf.editor.submitted', { id: w.id }));
      onCreated(w.id);
    },
    onError: (err) => {
      setCheck({ kind: 'error', text: errorText(err) });
      showError(err);
    },
  });

  return (
    <Modal
      open={open}
      width={1000}
      title={t('wf.editor.title')}
      onCancel={onClose}
      destroyOnHidden
      footer={
        <Space>
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button onClick={() => void validate(doc)} data-testid="wf-validate">
            {t('wf.editor.validate')}
          </Button>
          <Button type="primary" disabled={!doc.trim()} loading={submit.isPending} onClick={() => submit.mutate()} data-testid="wf-submit">
            {t('wf.editor.submit')}
          </Button>
        </Space>
      }
    >
      <Space direction="vertical" style={{ width: '100%' }} size="middle">
        <Space>
          <Typography.Text>{t('wf.editor.template')}</Typography.Text>
          <Select
            data-testid="wf-template"
            style={{ width: 360 }}
            placeholder={t('wf.editor.templatePlaceholder')}
            options={TEMPLATES.map((tp) => ({ value: tp.key, label: t(`wf.templates.${tp.key}`) }))}
            onChange={(k) => setDoc(TEMPLATES.find((tp) => tp.key === k)?.document ?? '')}
          />
        </Space>
        <Typography.Text strong>{t('wf.editor.document')}</Typography.Text>
        <Input.TextArea
          data-testid="wf-document"
          value={doc}
          onChange={(e) => setDoc(e.target.value)}
          autoSize={{ minRows: 14, maxRows: 24 }}
          spellCheck={false}
          style={{ fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', fontSize: 13 }}
        />
        <div data-testid="wf-check" data-kind={check.kind}>
          {check.kind === 'idle' && <Typography.Text type="secondary">{t('wf.editor.empty')}</Typography.Text>}
          {check.kind === 'checking' && <Typography.Text type="secondary">{t('wf.editor.checking')}</Typography.Text>}
          {check.kind === 'error' && <Alert type="error" showIcon message={t('wf.editor.invalid')} description={check.text} />}
          {check.kind === 'ok' && (
            <Alert type="success" showIcon message={t('wf.editor.valid', { steps: check.plan.steps.length, edges: check.plan.edges.length })} />
          )}
        </div>
        {check.kind === 'ok' && (
          <>
            <Typography.Text strong>{t('wf.editor.preview')}</Typography.Text>
            <DagGraph steps={check.plan.steps} edges={check.plan.edges} />
          </>
        )}
      </Space>
    </Modal>
  );
}
