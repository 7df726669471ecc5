"""WSGI entry point for gunicorn."""
from api.app import create_app

app = create_app()
