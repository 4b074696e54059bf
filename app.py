"""mi-viz: see, and exploit, the dependency structure inside masked diffusion models.

streamlit run app.py   (make app)

The navigation is built from the views (pages/views/): each view names its pages; a page file
calls one page function (decode, compare, estimator, families) with its view.
"""

import streamlit as st

from pages.kit.widgets import show_bug
from pages.views import VIEWS

st.set_page_config(page_title="mi-viz", page_icon="🧩", layout="wide")

pages = {"Overview": [st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)]}
for view in VIEWS.values():
    pages[view.name] = [st.Page(p.file, title=p.title, icon=p.icon) for p in view.pages]
try:
    st.navigation(pages).run()
except Exception:  # bad input is a message where it is read (UserError); anything reaching here is a bug
    show_bug()
