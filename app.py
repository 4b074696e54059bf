"""mi-viz: see, and exploit, the dependency structure inside masked diffusion models.

streamlit run app.py
"""

import streamlit as st

st.set_page_config(page_title="mi-viz", page_icon="🧩", layout="wide")

pages = {
    "Overview": [st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)],
    "Sudoku": [
        st.Page("pages/sudoku_decode.py", title="Sudoku decode", icon=":material/grid_on:"),
        st.Page("pages/sampler_comparison.py", title="Sampler comparison", icon=":material/compare_arrows:"),
        st.Page("pages/mi_estimator.py", title="MI estimator", icon=":material/insights:"),
    ],
    "Proteins": [
        st.Page("pages/protein_decode.py", title="Protein decode", icon=":material/biotech:"),
        st.Page("pages/protein_comparison.py", title="Protein comparison", icon=":material/stacked_line_chart:"),
        st.Page("pages/family.py", title="Protein families", icon=":material/hub:"),
    ],
}
st.navigation(pages).run()
