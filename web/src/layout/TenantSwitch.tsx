// The current-tenant switch in the header: the tenants the caller belongs
// to (admins and operators: all), the current one selected. Switching sets
// where new tasks go by default and refreshes every page's data.
import { Select } from 'antd';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { tenants } from '../api/tenants';
import { showError, showSuccess } from '../components/notify';

const NONE = '\u0000none';

export default function TenantSwitch() {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const mine = useQuery({ queryKey: ['my-tenants'], queryFn: tenants.mine, meta: { inlineErrors: true } });
  const change = useMutation({
    mutationFn: (name: string) => tenants.switchTo(name),
    onSuccess: (res) => {
      showSuccess(res.current ? t('ten.switched', { name: res.current }) : t('ten.switchedNone'));
      void qc.invalidateQueries();
    },
    onError: showError,
  });
  const data = mine.data;
  if (!data || (data.tenants.length === 0 && !data.current)) return null;
  const options = [
    { value: NONE, label: t('ten.none') },
    ...data.tenants
      .filter((x) => !x.disabled)
      .map((x) => ({
        value: x.name,
        label: x.display_name ? `${x.display_name} (${x.name})` : x.name,
      })),
  ];
  return (
    <Select<string>
      data-testid="tenant-switch"
      aria-label={t('ten.current')}
      size="small"
      style={{ width: 180 }}
      value={data.current || NONE}
      options={options}
      loading={change.isPending}
      onChange={(v) => change.mutate(v === NONE ? '' : v)}
    />
  );
}
