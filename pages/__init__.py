"""The app: Streamlit pages over the library, in three layers that import one way only
(import-linter checks it):

    pages/*.py   the pages: decode, compare, estimator, families, home (a page file per URL,
                 each a call of one page function with a view)
    views/       one view per domain: its inputs, its drawings, its metrics and exports, and
                 what it can do (a structure's contacts, a head picker) declared on it
    kit/         what every page shares: the one cached model loader, the trace / estimate /
                 ground-truth caches, the widgets and the in-browser decode viewer

page -> view -> kit -> mi_viz. No page names a domain.
"""
