// Admin toggle for self-registration (GET/PUT /api/v1/settings/registration).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Space, Switch, Tooltip, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { users } from '../../api/endpoints';
import { showSuccess } from '../../components/notify';

export default function RegistrationSwitch() {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const { data, isLoading } = useQuery({ queryKey: ['registration'], queryFn: users.getRegistration });
  const set = useMutation({
    mutationFn: users.setRegistration,
    onSuccess: (v) => {
      qc.setQueryData(['registration'], v);
      showSuccess(t('common.saved'));
    },
  });
  return (
    <Tooltip title={t('users.registrationHelp')}>
      <Space>
        <Typography.Text>{t('users.registration')}</Typography.Text>
        <Switch
          data-testid="registration-switch"
          size="small"
          loading={isLoading || set.isPending}
          checked={data?.enabled ?? false}
          disabled={!data}
          onChange={(v) => set.mutate(v)}
        />
      </Space>
    </Tooltip>
  );
}
