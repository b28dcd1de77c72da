"""Version counters: how backward notices that a tensor it saved was overwritten."""
import pytest

import learntorch
from oracle import require_torch


def both(program):
    return program(learntorch), program(require_torch())


def error_of(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.value


def test_version_counts_every_in_place_change_like_torch():
    def program(m):
        x = m.tensor([1.0, 2.0, 3.0])
        versions = [x._version]
        x.add_(1)
        versions.append(x._version)
        x[0] = 5
        versions.append(x._version)
        x.mul_(2).sub_(1)
        versions.append(x._version)
        view = x[1:]
        view.zero_()  # a view shares its base's counter
        versions += [x._version, view._version]
        x += 1
        versions.append(x._version)
        x.copy_(m.tensor([1.0, 1.0, 1.0]))
        x.fill_(2)
        x.zero_()
        versions.append(x._version)
        y = x + 1  # out-of-place ops leave the counter alone
        versions += [x._version, y._version]
        return versions
    lt, th = both(program)
    assert lt == th


@pytest.mark.parametrize("case", ["saved_input", "saved_output_exp", "saved_output_sigmoid",
                                  "through_a_view", "through_detach"])
def test_modifying_a_saved_tensor_in_place_fails_at_backward(case):
    def program(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        if case == "saved_input":
            b = a * 2
            c = b * b  # saves b
            b.add_(1)
            out = c
        elif case == "saved_output_exp":
            out = a.exp()  # saves its output
            out.add_(1)
        elif case == "saved_output_sigmoid":
            out = a.sigmoid()
            out.mul_(2)
        elif case == "through_a_view":
            b = a * 2
            out = b * b
            with m.no_grad():
                b[0:1].add_(1)
        else:
            b = a * 2
            out = b * b
            b.detach().add_(1)
        return error_of(lambda: out.sum().backward())
    lt, th = both(program)
    assert type(lt) is type(th) is RuntimeError
    assert "modified by an inplace operation" in str(lt)
    assert "modified by an inplace operation" in str(th)


def test_the_message_names_the_tensor_the_versions_and_the_fix():
    a = learntorch.tensor([1.0, 2.0], requires_grad=True)
    y = a.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"\[torch\.FloatTensor \[2\]\].*ExpBackward0.*version 1"
                                           r".*expected version 0.*clone\(\)"):
        y.sum().backward()


def test_in_place_on_an_unsaved_tensor_is_fine():
    def program(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        y = a * 2  # Mul by a number saves nothing that y's change affects
        y.add_(1)
        (y * 3).sum().backward()
        return a.grad.tolist()
    lt, th = both(program)
    assert lt == th


def test_in_place_on_a_leaf_that_requires_grad_is_refused_outside_no_grad():
    def program(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        errors = [type(error_of(lambda: a.add_(1))).__name__,
                  type(error_of(lambda: a.zero_())).__name__]
        with m.no_grad():
            a.add_(1)  # how optimizers update parameters
        return errors, a.tolist(), a._version, a.requires_grad, a.is_leaf
    lt, th = both(program)
    assert lt == th
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad.*no_grad"):
        learntorch.tensor([1.0], requires_grad=True).mul_(2)
