"""What every page shares, whatever the domain (pages/__init__.py): the kit never imports a view
or a page."""
