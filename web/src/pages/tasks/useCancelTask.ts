// Cancel mutation shared by the list and the detail drawer.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { tasks } from '../../api/endpoints';
import type { Task } from '../../api/types';
import { showSuccess } from '../../components/notify';
import { useAuth } from '../../auth/AuthContext';
import { atLeast } from '../../auth/roles';
import { TERMINAL_STATES } from '../../api/types';

export function useCancelTask() {
  const { t } = useTranslation();
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (task: Task) => tasks.cancel(task.id),
    onSuccess: (task) => {
      showSuccess(t('tasks.cancelled', { name: task.name }));
      void qc.invalidateQueries({ queryKey: ['tasks'] });
      void qc.invalidateQueries({ queryKey: ['task', task.id] });
    },
  });
}

/** useCanCancel mirrors the server rule: the owner or operator+, and not yet terminal. */
export function useCanCancel(): (task: Task) => boolean {
  const { user } = useAuth();
  return (task) =>
    !TERMINAL_STATES.includes(task.state) &&
    (atLeast(user?.role, 'operator') || (user?.id === task.owner_id && atLeast(user?.role, 'user')));
}
