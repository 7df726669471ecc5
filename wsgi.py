"""WSGI entry point for gunicorn."""
from cli.app import create_app

app = create_app()
