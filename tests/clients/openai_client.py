"""Drives Concierge's OpenAI-compatible API with the official `openai` Python client.

Run by the end-to-end test `openai_api` (tests/tests/e2e/openai_api.rs) as
    $CONCIERGE_PYTHON tests/clients/openai_client.py '<config JSON>'
with the config {"base_url", "key_a", "key_b", "model_a", "model_b", "chat_b"}: the
Worker's URL, the secret keys and assistant ids of two sites (A has a scripted upstream
and the warranty record of serial 0979825281; B's upstream fails), and a stored
conversation of site B. Prints one JSON object: what the client returned
(or raised) at each step, for the Rust test to assert. Steps that call the upstream model
come first, in the order the test queued its replies.
"""

import json
import sys

import openai
from openai import OpenAI


def failure(error):
    """What an exception the client raised says."""
    result = {"error": type(error).__name__}
    if isinstance(error, openai.APIStatusError):
        result["status"] = error.status_code
        result["code"] = error.code
        result["type"] = error.type
        result["message"] = error.message
        result["should_retry"] = error.response.headers.get("x-should-retry")
    return result


def attempt(call):
    try:
        return {"ok": call()}
    except openai.OpenAIError as error:
        return failure(error)


def completion(response):
    """A non-streamed chat.completion, as the client parsed it."""
    choice = response.choices[0]
    extra = response.model_extra or {}
    return {
        "object": response.object,
        "model": response.model,
        "content": choice.message.content,
        "role": choice.message.role,
        "finish_reason": choice.finish_reason,
        "choices": len(response.choices),
        "usage": response.usage.model_dump() if response.usage else None,
        "chat_id": extra.get("chat_id"),
    }


def streamed(stream):
    """A streamed completion, assembled from the client's parsed chunks."""
    text, finishes, usage, chat_ids, chunks = "", [], [], set(), 0
    for chunk in stream:
        chunks += 1
        chat_ids.add((chunk.model_extra or {}).get("chat_id"))
        if chunk.usage is not None:
            usage.append(chunk.usage.model_dump())
        for choice in chunk.choices:
            if choice.delta.content:
                text += choice.delta.content
            if choice.finish_reason is not None:
                finishes.append(choice.finish_reason)
    return {
        "content": text,
        "finish_reasons": finishes,
        "usage": usage,
        "chunks": chunks,
        "chat_ids": sorted(c for c in chat_ids if c is not None),
        "chunks_without_chat_id": None in chat_ids,
    }


def main():
    config = json.loads(sys.argv[1])
    base_url = config["base_url"].rstrip("/") + "/v1"
    client = OpenAI(base_url=base_url, api_key=config["key_a"], timeout=30.0)
    other = OpenAI(base_url=base_url, api_key=config["key_b"], timeout=30.0)
    model, model_b = config["model_a"], config["model_b"]
    results = {}

    def user(text):
        return [{"role": "user", "content": text}]

    # Models.
    listed = client.models.list()
    results["models"] = [
        {
            "id": m.id,
            "object": m.object,
            "owned_by": m.owned_by,
            "created": m.created,
            "template": (m.model_extra or {}).get("template"),
        }
        for m in listed.data
    ]
    results["model_retrieved"] = attempt(lambda: client.models.retrieve(model).id)

    # Calls the upstream (1): non-streamed; a caller's system message is dropped.
    results["non_stream"] = completion(
        client.chat.completions.create(
            model=model,
            messages=[
                {"role": "system", "content": "Answer in French."},
                {"role": "user", "content": [{"type": "text", "text": "tư vấn cấu hình pc chơi game"}]},
            ],
        )
    )
    # Calls the upstream (2): streamed, with the usage chunk.
    results["stream"] = streamed(
        client.chat.completions.create(
            model=model,
            messages=user("tư vấn cấu hình pc chơi game"),
            stream=True,
            stream_options={"include_usage": True},
        )
    )

    # A stored conversation: opened with chat_id "new", then continued by its id.
    raw = client.chat.completions.with_raw_response.create(
        model=model, messages=user("Kiểm tra bảo hành giúp em"), extra_body={"chat_id": "new"}
    )
    opened = completion(raw.parse())
    opened["header_chat_id"] = raw.headers.get("x-concierge-chat-id")
    results["opened"] = opened
    chat_id = opened["chat_id"]
    results["continued"] = completion(
        client.chat.completions.create(
            model=model, messages=user("em không nhớ ạ"), extra_body={"chat_id": chat_id}
        )
    )
    results["continued_stream"] = streamed(
        client.chat.completions.create(
            model=model,
            messages=user("serial là 0979825281."),
            extra_body={"chat_id": chat_id},
            stream=True,
        )
    )
    # The same message twice with one idempotency key: stored once, answered the same.
    repeat = dict(
        model=model,
        messages=user("SN: ZZZ-404-NOPE"),
        extra_body={"chat_id": chat_id},
        extra_headers={"Idempotency-Key": "openai-e2e-repeat-1"},
    )
    results["repeated"] = [
        completion(client.chat.completions.create(**repeat)),
        completion(client.chat.completions.create(**repeat)),
    ]
    conversation = client.conversations.retrieve(chat_id)
    results["conversation"] = {
        "id": conversation.id,
        "object": conversation.object,
        "created_at": conversation.created_at,
        "metadata": conversation.metadata,
        "messages": (conversation.model_extra or {}).get("messages"),
    }

    # Stateless: the bare message alone, and a warranty lookup in one message.
    results["stateless_bare"] = completion(
        client.chat.completions.create(model=model, messages=user("em không nhớ ạ"))
    )
    results["stateless_lookup"] = completion(
        client.chat.completions.create(
            model=model, messages=user("Kiểm tra bảo hành serial 0979825281")
        )
    )

    # Errors, as the client's exception classes.
    wrong = OpenAI(base_url=base_url, api_key="sk_not_a_real_key", timeout=30.0)
    results["wrong_key"] = attempt(lambda: wrong.models.list().data)
    results["unknown_model"] = attempt(
        lambda: client.chat.completions.create(model="gpt-4o", messages=user("hi")).id
    )
    results["malformed"] = attempt(
        lambda: client.chat.completions.create(
            model=model, messages=[{"role": "tool", "content": "x", "tool_call_id": "t1"}]
        ).id
    )
    results["unknown_chat"] = attempt(
        lambda: client.chat.completions.create(
            model=model, messages=user("hi"), extra_body={"chat_id": "no-such-chat"}
        ).id
    )

    # Site B's key sees nothing of site A.
    results["b_models"] = [m.id for m in other.models.list().data]
    results["b_model_a"] = attempt(
        lambda: other.chat.completions.create(model=model, messages=user("hi")).id
    )
    results["b_retrieve_a_model"] = attempt(lambda: other.models.retrieve(model).id)
    results["b_conversation_a"] = attempt(lambda: other.conversations.retrieve(chat_id).id)
    results["b_continue_a"] = attempt(
        lambda: other.chat.completions.create(
            model=model_b, messages=user("em không nhớ ạ"), extra_body={"chat_id": chat_id}
        ).id
    )

    # Site B's model fails once its message is stored: the client must not retry (a retry
    # would store the message again).
    results["b_failing"] = attempt(
        lambda: other.chat.completions.create(
            model=model_b,
            messages=user("tư vấn cấu hình pc chơi game"),
            extra_body={"chat_id": config["chat_b"]},
        ).id
    )

    print(json.dumps(results, ensure_ascii=False))


if __name__ == "__main__":
    main()
