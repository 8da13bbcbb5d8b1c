// usePagedList is the state behind every filtered, server-paginated table:
// the applied filter, the page, the query, and antd pagination props.
// Applying an unchanged filter refetches, so "search" always shows fresh rows.
import { useState } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { TablePaginationConfig } from 'antd';
import { useTranslation } from 'react-i18next';
import type { PageQuery } from '../api/endpoints';
import type { List } from '../api/types';
import { PAGE_SIZES } from './format';

export function usePagedList<F extends object, T>(
  key: string,
  fetch: (q: F & PageQuery) => Promise<List<T>>,
  opts: { pageSize?: number; refetchInterval?: number } = {},
) {
  const { t } = useTranslation();
  const [filter, setFilter] = useState<F>({} as F);
  const [page, setPage] = useState({ current: 1, pageSize: opts.pageSize ?? PAGE_SIZES[0] });
  const query = { ...filter, limit: page.pageSize, offset: (page.current - 1) * page.pageSize };
  const result = useQuery({
    queryKey: [key, query],
    queryFn: () => fetch(query),
    placeholderData: keepPreviousData,
    refetchInterval: opts.refetchInterval,
  });

  const apply = (next: F) => {
    const unchanged = JSON.stringify(next) === JSON.stringify(filter) && page.current === 1;
    setFilter(next);
    setPage((p) => ({ ...p, current: 1 }));
    if (unchanged) void result.refetch();
  };

  const pagination: TablePaginationConfig = {
    current: page.current,
    pageSize: page.pageSize,
    total: result.data?.total ?? 0,
    pageSizeOptions: PAGE_SIZES,
    showSizeChanger: true,
    showTotal: (count) => t('common.total', { count }),
    onChange: (current, pageSize) => setPage({ current, pageSize }),
  };

  return { ...result, apply, pagination };
}
