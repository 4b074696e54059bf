"""mi-viz: see, and exploit, the dependency structure inside masked diffusion models.

streamlit run app.py   (make app)

The navigation is built from the views (pages/views/): each view names its pages; a page file
calls one page function (decode, compare, estimator, families) with its view, or a view's page
with no file is that function called here (PAGES).
"""

from functools import partial

import streamlit as st

from pages import compare, decode
from pages.kit import activity
from pages.kit.widgets import show_bug
from pages.views import VIEWS, PagePlan, View

# a page a view declares without a file: the page function it calls, by kind
PAGES = {
    "decode": lambda view, plan: decode.render(view, plan.title),
    "compare": lambda view, plan: compare.render(view, plan.title, plan.tab),
}


def nav_page(view: View, plan: PagePlan) -> st.Page:
    """A view's page in the navigation: its file, or (no file) its page function at plan.url."""
    if plan.file:
        return st.Page(plan.file, title=plan.title, icon=plan.icon)
    return st.Page(partial(PAGES[plan.kind], view, plan), title=plan.title, icon=plan.icon, url_path=plan.url)


st.set_page_config(page_title="mi-viz", page_icon="🧩", layout="wide")

pages = {"Overview": [st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)]}
for view in VIEWS.values():
    pages[view.name] = [nav_page(view, p) for p in view.pages]
try:
    with activity.page_run():  # the launcher's background warm-up waits while a page runs
        st.navigation(pages).run()
except Exception:  # bad input is a message where it is read (UserError); anything reaching here is a bug
    show_bug()
