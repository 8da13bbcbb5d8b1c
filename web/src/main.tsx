// Entry point: providers (antd theme + locale, React Query, router, auth) around the routes.
import { StrictMode, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router-dom';
import { App as AntApp, ConfigProvider } from 'antd';
import enUS from 'antd/locale/en_US';
import zhCN from 'antd/locale/zh_CN';
import { QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import './i18n';
import App from './App';
import { AuthProvider } from './auth/AuthContext';
import { NotifyBridge, showError } from './components/notify';

const queryClient = new QueryClient({
  // Every failed load is reported once with the server's message, except
  // queries marked meta.inlineErrors, whose page shows the error in place.
  queryCache: new QueryCache({
    onError: (err, query) => {
      if (!query.meta?.inlineErrors) showError(err);
    },
  }),
  defaultOptions: {
    queries: { retry: false, refetchOnWindowFocus: false, staleTime: 5_000 },
    mutations: { onError: (err) => showError(err) },
  },
});

function Localized({ children }: { children: ReactNode }) {
  const { i18n } = useTranslation();
  return <ConfigProvider locale={i18n.language === 'en' ? enUS : zhCN}>{children}</ConfigProvider>;
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Localized>
      <AntApp>
        <NotifyBridge />
        <QueryClientProvider client={queryClient}>
          <BrowserRouter>
            <AuthProvider>
              <App />
            </AuthProvider>
          </BrowserRouter>
        </QueryClientProvider>
      </AntApp>
    </Localized>
  </StrictMode>,
);
