// Error and success toasts. antd's message API needs the App context, so
// <NotifyBridge/> (rendered once inside <App>) hands its instance to this
// module and non-component code (React Query callbacks) can report errors.
import { App } from 'antd';
import i18n from '../i18n';
import { ApiError } from '../api/http';
import { serverErrorText } from '../i18n/server';
import { codedText } from '../i18n/codes';

type MessageApi = ReturnType<typeof App.useApp>['message'];

let message: MessageApi | null = null;

export function NotifyBridge(): null {
  message = App.useApp().message;
  return null;
}

/** errorText renders an API error as "message (code, request id)". */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) {
    const parts = [err.code];
    if (err.requestId) parts.push(i18n.t('common.requestId', { id: err.requestId }));
    return `${codedText(err.code, err.params) ?? serverErrorText(err.code, err.message)} (${parts.join(', ')})`;
  }
  return err instanceof Error ? err.message : String(err);
}

export function showError(err: unknown): void {
  const text = errorText(err);
  if (message) void message.error(text, 6);
  else console.error(text);
}

export function showSuccess(text: string): void {
  if (message) void message.success(text);
}
