// i18n setup: 简体中文 by default, English switchable; the choice persists in
// localStorage. React escapes interpolated values itself, so i18next's own
// escaping is off (it would double-escape names such as "<img …>").
import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import dayjs from 'dayjs';
import 'dayjs/locale/zh-cn';
import en from './en';
import zh from './zh';

export type Lang = 'zh' | 'en';
export const LANGS: { value: Lang; label: string }[] = [
  { value: 'zh', label: '简体中文' },
  { value: 'en', label: 'English' },
];

const LANG_KEY = 'heteroflow.lang';

function initialLang(): Lang {
  try {
    return localStorage.getItem(LANG_KEY) === 'en' ? 'en' : 'zh';
  } catch {
    return 'zh';
  }
}

function applyDocument(lang: Lang): void {
  document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
  dayjs.locale(lang === 'zh' ? 'zh-cn' : 'en');
}

const lang = initialLang();
void i18n.use(initReactI18next).init({
  resources: { zh: { translation: zh }, en: { translation: en } },
  lng: lang,
  fallbackLng: 'zh',
  interpolation: { escapeValue: false },
  returnNull: false,
});
applyDocument(lang);

/** setLang switches the language and remembers the choice. */
export function setLang(next: Lang): void {
  try {
    localStorage.setItem(LANG_KEY, next);
  } catch {
    // Storage disabled: the choice lasts for this page.
  }
  applyDocument(next);
  void i18n.changeLanguage(next);
}

export default i18n;
