"""The families page: a family backbone's MI against a structure's contacts, generation judged by
pair statistics, and a family model trained here on your own alignment (the tabs:
views/family_tabs.py)."""

from __future__ import annotations

import streamlit as st

from .kit.runtime import through_app
from .views.family import WHERE_ALIGNMENTS, family_backbones, unbuilt_notes
from .views.family_tabs import contacts_tab, generation_tab
from .views.family_train import train_tab


def render() -> None:
    through_app()
    st.title("Protein families")
    st.markdown(
        "A family backbone is ESM-C's network trained on one family's alignment (the gap a symbol of its own). "
        "For a Potts model, two columns are conditionally dependent given the rest of a row exactly where they "
        "are coupled, and couplings follow residue contacts: so the backbone's **conditional MI**, averaged "
        "over natural rows, can be checked against a real structure. Decode a family member on the "
        "**Protein decode** page (pick a family backbone); compare samplers by pair statistics on "
        "**Protein comparison**."
    )
    st.caption(WHERE_ALIGNMENTS)
    families = family_backbones()
    # one family for the page: the contacts and the generation tabs show the same one
    label = st.selectbox("Family", list(families), key="fam_pick") if families else None
    for note in unbuilt_notes():
        st.caption(note)
    tab_contacts, tab_gen, tab_train = st.tabs(
        ["Contacts from MI", "Generation by pair statistics", "Train on your alignment"]
    )
    with tab_contacts:
        contacts_tab(families, label)
    with tab_gen:
        generation_tab(families, label)
    with tab_train:
        train_tab()
