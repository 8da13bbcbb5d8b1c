package main

import (
	"errors"
	"net/http"

	"github.com/heteroflow/heteroflow/controlplane/client"
)

// The server's error messages are English (the console translates them
// from their stable codes); the CLI prints each with the Chinese of its
// code, or of its HTTP status for a code it does not know, so the reason
// is never in one language only.

// apiCodesZH are the Chinese of the API's error codes (docs/api-contract.md).
var apiCodesZH = map[string]string{
	"invalid_argument":       "输入无效",
	"unauthenticated":        "未登录或凭据无效",
	"forbidden":              "无权执行此操作",
	"not_found":              "未找到",
	"method_not_allowed":     "不支持此方法",
	"conflict":               "与当前状态冲突",
	"payload_too_large":      "请求过大",
	"unsupported_media_type": "不支持的内容类型",
	"locked":                 "账户已锁定",
	"too_many_requests":      "请求过于频繁，请稍后重试",
	"unavailable":            "服务暂不可用，请稍后重试",
	"internal":               "服务器内部错误",
	"cancelled":              "请求已取消",
	"never_fits":             "集群中没有任何节点能容纳此任务（可用 --wait-for-nodes 排队等待新节点）",
	"idempotency_key_reused": "幂等键已用于另一个不同的请求",
}

// apiStatusZH is the Chinese of a status whose code has none above.
var apiStatusZH = map[int]string{
	http.StatusBadRequest:      "输入无效",
	http.StatusUnauthorized:    "未登录或凭据无效",
	http.StatusForbidden:       "无权执行此操作",
	http.StatusNotFound:        "未找到",
	http.StatusConflict:        "与当前状态冲突",
	http.StatusTooManyRequests: "请求过于频繁，请稍后重试",
}

// apiErrorZH is the Chinese half of err when it is an answer of the API
// or a server that did not answer, and "" otherwise.
func apiErrorZH(err error) string {
	var ae *client.Error
	if errors.As(err, &ae) {
		if zh, ok := apiCodesZH[ae.Code]; ok {
			return zh
		}
		if zh, ok := apiStatusZH[ae.Status]; ok {
			return zh
		}
		if ae.Status >= 500 {
			return "服务器错误"
		}
		return "请求失败"
	}
	if client.Unreachable(err) {
		return "无法连接服务器，请检查 --server 地址与服务器是否运行"
	}
	return ""
}
