// Package fakemodel is a scripted model API for tests of agent harnesses:
// an [httptest.Server] on 127.0.0.1 that speaks enough of Anthropic's
// Messages API (POST /v1/messages, streamed as server-sent events or not)
// and of OpenAI's Responses API (POST /v1/responses, streamed) to drive a
// real agent command line through a fixed script of tool calls and a
// final message.
//
// A [Script] is a list of [Step]s. The harness's main loop sends its
// tools with every request; the fake answers such a request with the step
// whose index is the number of tool results the conversation already
// holds, so a CLI that runs each tool call and reports back walks the
// script in order. Requests without tools (titles, summaries, other side
// queries a CLI makes) get a short text answer and do not move the
// script.
//
// Every request is recorded ([Server.Requests]) with its headers and
// body, so a test can prove which key arrived and what the CLI sent; a
// request without the expected key ([WithKey]) is answered 401, as the
// real service would.
package fakemodel
