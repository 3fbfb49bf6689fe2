FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN useradd --system --home /app attest && mkdir -p /app/var/media && chown -R attest /app/var
USER attest
# collectstatic needs settings that pass the production checks; the real key comes at run time.
RUN SECRET_KEY=build-only-placeholder-key-not-used-at-runtime-0123456789 python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["gunicorn", "annotation.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
