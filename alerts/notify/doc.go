// Package notify delivers alert notifications from the store's outbox:
// Alertmanager (v2 API), a signed generic webhook, the DingTalk, WeCom
// (企业微信) and Feishu/Lark group robots with their message formats and
// signatures, and SMTP e-mail.
//
// The outbox row is written in the same transaction as the alert change,
// so nothing is lost while a receiver is down; Worker delivers due rows,
// retries failures with exponential backoff (5s doubling, at most 10m) and
// gives up after MaxAttempts, leaving the last error visible on the row.
package notify
