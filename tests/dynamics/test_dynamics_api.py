"""Public constants say what they hold."""

import pydoc

import jaxkit.dynamics as dyn


def test_networks_documents_itself():
    text = pydoc.render_doc(dyn.NETWORKS, renderer=pydoc.plaintext)
    assert "network families" in text and "unit_spec" in text and "jaxkit.dynamics._" not in text
    assert isinstance(dyn.NETWORKS, dict)
    for name, net in dyn.NETWORKS.items():
        assert name in type(dyn.NETWORKS).__doc__  # every entry is described
        assert callable(net.apply) and isinstance(net.unit_spec, dict)
