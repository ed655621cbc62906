FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
# The runtime lock only: test and development tools are in requirements-dev.txt.
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN DATA_DIR=/tmp/build python manage.py collectstatic --noinput -v0
EXPOSE 8000
CMD ["gunicorn", "--config", "python:config.gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
